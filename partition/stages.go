package partition

import (
	"encoding/json"
	"fmt"
)

// ReadStages reads the stages of a split from the JSON summary of tessel
// partition --json (Report): the names of every stage's layers (a layer
// profile's names, which may be the model's module names) and its device,
// in pipeline order. A stage between others may be empty (no layers).
// The JSON of tessel plan --json, which holds that summary as
// "partition", is read too.
func ReadStages(data []byte) (names [][]string, devices []int, err error) {
	var plan struct {
		Partition json.RawMessage `json:"partition"`
	}
	if json.Unmarshal(data, &plan) == nil && len(plan.Partition) > 0 {
		data = plan.Partition
	}
	var r struct {
		Contiguous *bool `json:"contiguous"`
		Stages     []struct {
			Stage  *int     `json:"stage"`
			Device *int     `json:"device"`
			CPU    bool     `json:"cpu"`
			Nodes  []string `json:"nodes"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, fmt.Errorf("not the JSON of tessel partition --json: %v", err)
	}
	if len(r.Stages) == 0 {
		return nil, nil, fmt.Errorf("no \"stages\": want the JSON of tessel partition --json")
	}
	if r.Contiguous != nil && !*r.Contiguous {
		return nil, nil, fmt.Errorf("a non-contiguous split: its stages are no chain of layers")
	}
	for i, s := range r.Stages {
		switch {
		case s.Stage == nil || *s.Stage != i:
			return nil, nil, fmt.Errorf("stages[%d]: want \"stage\": %d (stages in pipeline order)", i, i)
		case s.Device == nil || *s.Device < 0:
			return nil, nil, fmt.Errorf("stages[%d]: no device", i)
		case s.CPU:
			return nil, nil, fmt.Errorf("stages[%d] runs on a CPU core: a pipeline stage runs on an accelerator", i)
		case len(s.Nodes) == 0 && (i == 0 || i == len(r.Stages)-1):
			return nil, nil, fmt.Errorf("stages[%d]: no layers (only a stage between others may be empty)", i)
		}
		names = append(names, s.Nodes)
		devices = append(devices, *s.Device)
	}
	return names, devices, nil
}
