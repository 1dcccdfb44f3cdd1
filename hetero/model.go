package hetero

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
)

// LoadModel reads the model m to split onto the devices of cl, the
// cluster file clusterPath: a layer profile (not a graph of Tarnawski et
// al.'s set, which flag, the command's option that asks for the cluster,
// does not take), one accelerator per device of cl, and in bytes where
// cl gives devices "memory_bytes". Every failure is a
// *partition.InputError naming the flags and files.
func LoadModel(m partition.Model, cl *cluster.Cluster, clusterPath, flag string) (*partition.Graph, error) {
	if d := m.Overrides.Devices; d > 0 && d != len(cl.Devices) {
		return nil, &partition.InputError{Err: fmt.Errorf("--devices %d for a cluster of %d devices", d, len(cl.Devices))}
	}
	m.Overrides.Devices = len(cl.Devices)
	g, err := m.Load()
	if err != nil {
		return nil, err
	}
	if g.IDs != nil {
		return nil, &partition.InputError{Err: fmt.Errorf("%s: %s needs a layer profile, not a graph of Tarnawski et al.'s set", m.Path, flag)}
	}
	if cl.DeviceMemoryBytes() != nil && !g.Bytes {
		return nil, &partition.InputError{Err: fmt.Errorf("%s: \"memory_bytes\" needs a profile in bytes (\"device_bytes\")", clusterPath)}
	}
	return g, nil
}
