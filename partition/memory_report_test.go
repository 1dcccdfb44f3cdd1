package partition

import (
	"encoding/json"
	"testing"
)

func TestMemoryReport(t *testing.T) {
	mem := []DeviceMemory{
		{Device: 0, Capacity: 80e9, Static: 56e9, Free: 24e9, Activation: 1.5e9, Unit: 1.5e9, Budget: 16},
		{Device: 1, Capacity: 80e9, Static: 60.1234567e9, Free: 19.87654321e9, Activation: 0.25e9, Unit: 1.5e9, Budget: 13},
	}
	if NewMemoryReport(nil, true, 1) != nil {
		t.Error("NewMemoryReport(nil) is not nil")
	}
	data, err := json.Marshal(NewMemoryReport(mem[:1], true, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bytes":true,"unit":1,"devices":[{"device":0,"capacity":80000000000,"static":56000000000,"free":24000000000,"activation":1500000000,"unit":1500000000,"budget":16}]}`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
}
