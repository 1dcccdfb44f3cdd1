package cluster

// DeviceMemoryBytes is each device's memory in bytes from the cluster's
// "memory_bytes", 0 where a device gives none (the model's then); nil
// when no device gives one.
func (c *Cluster) DeviceMemoryBytes() []float64 {
	var out []float64
	for _, d := range c.Devices {
		if d.MemoryBytes > 0 {
			out = make([]float64, len(c.Devices))
			break
		}
	}
	for i := range out {
		out[i] = c.Devices[i].MemoryBytes
	}
	return out
}
