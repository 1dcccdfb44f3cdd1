package main

import (
	"bytes"
	"context"
	"errors"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
)

// partitionOnCluster is tessel partition --cluster (and the partition half
// of tessel plan --cluster): the split and device order of package hetero.
func partitionOnCluster(ctx context.Context, o partitionOptions, cl *cluster.Cluster) (*hetero.Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	switch {
	case o.Chunks > 1:
		return nil, usageErrorf("--cluster takes one stage per device: no --chunks")
	case o.NonContiguous:
		return nil, usageErrorf("--cluster and --non-contiguous do not go together")
	case o.Expert != "":
		return nil, usageErrorf("--cluster and --expert do not go together")
	case o.Devices > 0 && o.Devices != len(cl.Devices):
		return nil, usageErrorf("--devices %d for a cluster of %d devices", o.Devices, len(cl.Devices))
	}
	o.Devices = len(cl.Devices)
	g, err := o.loadModel()
	if err != nil {
		return nil, err
	}
	if g.IDs != nil {
		return nil, usageErrorf("%s: --cluster needs a layer profile, not a graph of Tarnawski et al.'s set", o.Model)
	}
	if cl.DeviceMemoryBytes() != nil && !g.Bytes {
		return nil, usageErrorf("%s: \"memory_bytes\" needs a profile in bytes (\"device_bytes\")", o.Cluster)
	}
	r, err := hetero.Run(ctx, g, cl, hetero.Options{TimeUnit: o.TimeUnit, MemoryUnit: o.MemoryUnit})
	switch {
	case errors.Is(err, hetero.ErrNoSplit):
		return nil, usageErrorf("%s on %s: %v", o.Model, o.Cluster, err)
	case err != nil:
		return nil, usageErrorf("%s: %v", o.Model, err)
	}
	if o.Out != "" {
		var buf bytes.Buffer
		if err := r.Converted.Placement.Write(&buf); err != nil {
			return nil, err
		}
		if err := writeNew(o.Out, o.Force, buf.Bytes()); err != nil {
			return nil, err
		}
	}
	if o.ClusterOut != "" {
		var buf bytes.Buffer
		if err := r.Cluster.Write(&buf); err != nil {
			return nil, err
		}
		if err := writeNew(o.ClusterOut, o.Force, buf.Bytes()); err != nil {
			return nil, err
		}
	}
	return r, nil
}
