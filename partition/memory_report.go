package partition

import (
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// MemoryReport is each device's memory under a split, as tessel plan
// --json reports it: what its stages hold for good and the budget left for
// the schedule, figures rounded to 6 decimals.
type MemoryReport struct {
	Bytes   bool                 `json:"bytes"` // the model's memory is in bytes
	Unit    float64              `json:"unit"`  // the conversion's MemoryUnit
	Devices []DeviceMemoryReport `json:"devices"`
}

// DeviceMemoryReport is one device's DeviceMemory in a MemoryReport.
type DeviceMemoryReport struct {
	Device     int     `json:"device"`
	Capacity   float64 `json:"capacity"`
	Static     float64 `json:"static"`
	Free       float64 `json:"free"`
	Activation float64 `json:"activation"`
	Unit       float64 `json:"unit"`
	Budget     int     `json:"budget"`
}

// NewMemoryReport is the report of mem (from Conversion.Memory); bytes
// says the model's memory is in bytes, unit is the conversion's
// MemoryUnit. It returns nil for nil mem (no memory model).
func NewMemoryReport(mem []DeviceMemory, bytes bool, unit float64) *MemoryReport {
	if mem == nil {
		return nil
	}
	r := &MemoryReport{Bytes: bytes, Unit: unit}
	for _, m := range mem {
		r.Devices = append(r.Devices, DeviceMemoryReport{Device: m.Device, Capacity: m.Capacity, Static: textfmt.Round6(m.Static),
			Free: textfmt.Round6(m.Free), Activation: textfmt.Round6(m.Activation), Unit: textfmt.Round6(m.Unit), Budget: m.Budget})
	}
	return r
}
