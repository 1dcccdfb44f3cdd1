package runtimegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
)

// Mode is how a program communicates.
type Mode string

const (
	// Blocking programs send and receive inline: a send returns when the
	// peer has received (rendezvous), a receive when the tensor has arrived.
	Blocking Mode = "blocking"
	// NonBlocking programs post receives early and sends right after the
	// producer, and wait for a tensor only right before its consumer.
	NonBlocking Mode = "nonblocking"
)

// Modes lists every Mode, in a stable order (a new slice each call).
func Modes() []Mode { return []Mode{NonBlocking, Blocking} }

// OpKind is what an operation does. The set is closed.
type OpKind string

const (
	// Compute runs a block that occupies this device alone.
	Compute OpKind = "compute"
	// Collective runs a block on a device group: every member runs it at
	// the same place of its program, and it starts when all have reached it.
	Collective OpKind = "collective"
	// Send ships a tensor to Peer: blocking in a blocking program, posted
	// (and waited at the end of the program) in a non-blocking one.
	Send OpKind = "send"
	// Recv receives a tensor from Peer: blocking in a blocking program,
	// posted in a non-blocking one (then Wait makes it usable).
	Recv OpKind = "recv"
	// Wait blocks until the transfer Tag, posted earlier on this device,
	// has completed.
	Wait OpKind = "wait"
	// Offload starts copying what forward instance Block@Micro saved for
	// its backward to host memory (on a side stream where CUDA is
	// present) and frees it on the device once copied (OptPipe's
	// offload).
	Offload OpKind = "offload"
	// Reload starts copying it back; the first gradient block of the
	// instance waits for the copy.
	Reload OpKind = "reload"
	// Recompute runs forward instance Block@Micro again from its inputs
	// (the checkpoint its first run kept, having saved nothing else), so
	// that its gradient blocks find what a forward saves.
	Recompute OpKind = "recompute"
)

// OpKinds lists every OpKind, in a stable order (a new slice each call).
func OpKinds() []OpKind {
	return []OpKind{Compute, Collective, Send, Recv, Wait, Offload, Reload, Recompute}
}

// IsMemory reports whether the op offloads, reloads or recomputes a
// forward instance's saved tensors.
func (o Op) IsMemory() bool { return o.Kind == Offload || o.Kind == Reload || o.Kind == Recompute }

// Op is one operation of a device's program.
//
// Block and Micro name the instance B^Micro of block Block that the
// operation serves: the block run (compute, collective), the producer of
// the tensor (send, and a wait on a send) or its consumer (recv, and a wait
// on a receive). Peer, Tensor and Tag are set for send, recv and wait
// only: the device at the other end, the tensor's name (TensorName) and
// the transfer's number, unique among the programs of one schedule; a send
// and a receive of the same transfer share it (it is the tag of
// torch.distributed's isend/irecv).
type Op struct {
	Kind   OpKind
	Block  string
	Micro  int
	Peer   int
	Tensor string
	Tag    int
}

// IsComm reports whether the op is a send, a receive or a wait.
func (o Op) IsComm() bool { return o.Kind == Send || o.Kind == Recv || o.Kind == Wait }

// TensorName is the name of the tensor that dependency from → to carries
// for one micro-batch, e.g. "f0->f1@3".
func TensorName(from, to string, micro int) string {
	return from + "->" + to + "@" + strconv.Itoa(micro)
}

// SplitTensorName undoes TensorName. Ids containing "->" make the split
// ambiguous; the first "->" wins.
func SplitTensorName(name string) (from, to string, micro int, err error) {
	at := strings.LastIndexByte(name, '@')
	arrow := strings.Index(name, "->")
	if at < 0 || arrow < 0 || arrow > at {
		return "", "", 0, fmt.Errorf("tensor %q: want FROM->TO@MICRO", name)
	}
	micro, err = strconv.Atoi(name[at+1:])
	if err != nil || micro < 0 {
		return "", "", 0, fmt.Errorf("tensor %q: micro-batch %q is not a non-negative integer", name, name[at+1:])
	}
	from, to = name[:arrow], name[arrow+2:at]
	if from == "" || to == "" {
		return "", "", 0, fmt.Errorf("tensor %q: want FROM->TO@MICRO", name)
	}
	return from, to, micro, nil
}

// String is the op's text form, which ParseOp reads back:
//
//	compute f0@3
//	collective fs@3
//	offload f0@3
//	reload f0@3
//	recompute f0@3
//	send f0->f1@3 to 1 #5
//	recv f0->f1@3 from 0 #5
//	wait f0->f1@3 to 1 #5     (a posted send)
//	wait f0->f1@3 from 0 #5   (a posted receive)
func (o Op) String() string {
	switch o.Kind {
	case Compute, Collective, Offload, Reload, Recompute:
		return fmt.Sprintf("%s %s@%d", o.Kind, o.Block, o.Micro)
	case Send:
		return fmt.Sprintf("send %s to %d #%d", o.Tensor, o.Peer, o.Tag)
	case Recv:
		return fmt.Sprintf("recv %s from %d #%d", o.Tensor, o.Peer, o.Tag)
	case Wait:
		dir := "from"
		if from, _, _, err := SplitTensorName(o.Tensor); err == nil && from == o.Block {
			dir = "to"
		}
		return fmt.Sprintf("wait %s %s %d #%d", o.Tensor, dir, o.Peer, o.Tag)
	}
	return fmt.Sprintf("%s?", o.Kind)
}

// ParseOp reads the text form of String.
func ParseOp(s string) (Op, error) {
	f := strings.Fields(s)
	bad := func(format string, args ...any) (Op, error) {
		return Op{}, fmt.Errorf("op %q: %s", s, fmt.Sprintf(format, args...))
	}
	if len(f) == 0 {
		return bad("empty")
	}
	switch k := OpKind(f[0]); k {
	case Compute, Collective, Offload, Reload, Recompute:
		if len(f) != 2 {
			return bad("want %s BLOCK@MICRO", k)
		}
		at := strings.LastIndexByte(f[1], '@')
		if at <= 0 {
			return bad("want %s BLOCK@MICRO", k)
		}
		m, err := strconv.Atoi(f[1][at+1:])
		if err != nil || m < 0 {
			return bad("micro-batch %q is not a non-negative integer", f[1][at+1:])
		}
		return Op{Kind: k, Block: f[1][:at], Micro: m}, nil
	case Send, Recv, Wait:
		if len(f) != 5 || !strings.HasPrefix(f[4], "#") {
			return bad("want %s TENSOR to|from PEER #TAG", k)
		}
		from, to, m, err := SplitTensorName(f[1])
		if err != nil {
			return bad("%v", err)
		}
		dir := f[2]
		switch {
		case k == Send && dir != "to", k == Recv && dir != "from", k == Wait && dir != "to" && dir != "from":
			return bad("direction %q does not fit %s", dir, k)
		}
		peer, err := strconv.Atoi(f[3])
		if err != nil || peer < 0 {
			return bad("peer %q is not a device", f[3])
		}
		tag, err := strconv.Atoi(f[4][1:])
		if err != nil || tag < 0 {
			return bad("tag %q is not a non-negative integer", f[4])
		}
		block := to
		if dir == "to" {
			block = from
		}
		return Op{Kind: k, Block: block, Micro: m, Peer: peer, Tensor: f[1], Tag: tag}, nil
	}
	return bad("unknown operation %q (want one of %v)", f[0], OpKinds())
}

// opJSON is an op in a program file: fields that do not apply to the kind
// are absent.
type opJSON struct {
	Op     OpKind  `json:"op"`
	Block  string  `json:"block"`
	Micro  int     `json:"micro"`
	Peer   *int    `json:"peer,omitempty"`
	Tensor *string `json:"tensor,omitempty"`
	Tag    *int    `json:"tag,omitempty"`
}

// MarshalJSON writes {"op", "block", "micro"} and, for communication,
// "peer", "tensor" and "tag".
func (o Op) MarshalJSON() ([]byte, error) {
	j := opJSON{Op: o.Kind, Block: o.Block, Micro: o.Micro}
	if o.IsComm() {
		j.Peer, j.Tensor, j.Tag = &o.Peer, &o.Tensor, &o.Tag
	}
	return marshal(j)
}

// marshal is json.Marshal without HTML escaping: tensor names hold "->".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads an op strictly: a known kind, and exactly the fields
// of that kind.
func (o *Op) UnmarshalJSON(data []byte) error {
	var j opJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	if !slices.Contains(OpKinds(), j.Op) {
		return fmt.Errorf("unknown op %q (want one of %v)", j.Op, OpKinds())
	}
	if j.Block == "" {
		return fmt.Errorf("%s: no block", j.Op)
	}
	if j.Micro < 0 {
		return fmt.Errorf("%s %s: negative micro-batch %d", j.Op, j.Block, j.Micro)
	}
	x := Op{Kind: j.Op, Block: j.Block, Micro: j.Micro}
	comm := x.IsComm()
	if has := j.Peer != nil || j.Tensor != nil || j.Tag != nil; has != comm || comm && (j.Peer == nil || j.Tensor == nil || j.Tag == nil) {
		if comm {
			return fmt.Errorf("%s %s@%d: needs peer, tensor and tag", j.Op, j.Block, j.Micro)
		}
		return fmt.Errorf("%s %s@%d: peer, tensor and tag apply only to send, recv and wait", j.Op, j.Block, j.Micro)
	}
	if comm {
		x.Peer, x.Tensor, x.Tag = *j.Peer, *j.Tensor, *j.Tag
	}
	*o = x
	return nil
}

// Role is what a dependency carries at run time.
type Role string

const (
	// Activation: the output of a forward block, input of the next forward.
	Activation Role = "activation"
	// Gradient: from the backward (or input block) of a forward block's
	// consumer to the backward (or input block) of the forward block, the
	// gradient of its output.
	Gradient Role = "gradient"
	// Saved: from a forward block to its own gradient blocks, or from an
	// input block to its weight block, on the same devices: what the
	// later block computes from (activations, the kept graph), never sent.
	Saved Role = "saved"
	// Order: any other dependency; a worker sends a one-element token.
	Order Role = "order"
)

// Port is one dependency as seen from one of its ends.
type Port struct {
	Block string `json:"block"` // the block at the other end
	Role  Role   `json:"role"`
}

// BlockInfo is a block of the placement with what a worker needs to run
// it: its dependencies with their roles and, for a gradient block
// (backward, input, weight), the forward block it differentiates.
type BlockInfo struct {
	ID      string         `json:"id"`
	Kind    placement.Kind `json:"kind"`
	Devices []int          `json:"devices"`
	Time    int            `json:"time"`
	Forward string         `json:"forward,omitempty"`
	Inputs  []Port         `json:"inputs"`
	Outputs []Port         `json:"outputs"`
}

// Program is what one device runs for a whole iteration. Every program of
// a schedule carries the same Blocks and Groups (the device groups of the
// group blocks, in a fixed order, so that every rank creates them in the
// same order).
type Program struct {
	Placement    string      `json:"placement"`
	Device       int         `json:"device"`
	Devices      int         `json:"devices"`
	Mode         Mode        `json:"mode"`
	MicroBatches int         `json:"micro_batches"`
	Groups       [][]int     `json:"groups"`
	Blocks       []BlockInfo `json:"blocks"`
	Ops          []Op        `json:"ops"`
}

// Block returns the info of the block with the given id, or nil.
func (p *Program) Block(id string) *BlockInfo {
	for i := range p.Blocks {
		if p.Blocks[i].ID == id {
			return &p.Blocks[i]
		}
	}
	return nil
}

// Marshal encodes the program as a JSON file: one block and one op per
// line, so that files stay readable and diffs short. Same program, same
// bytes.
func (p *Program) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	scalars := []struct {
		name string
		v    any
	}{{"placement", p.Placement}, {"device", p.Device}, {"devices", p.Devices}, {"mode", p.Mode},
		{"micro_batches", p.MicroBatches}, {"groups", p.Groups}}
	for _, f := range scalars {
		j, err := marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("program of device %d: %s: %w", p.Device, f.name, err)
		}
		fmt.Fprintf(&b, "  %q: %s,\n", f.name, j)
	}
	if err := writeLines(&b, "blocks", p.Blocks, ","); err != nil {
		return nil, fmt.Errorf("program of device %d: %w", p.Device, err)
	}
	if err := writeLines(&b, "ops", p.Ops, ""); err != nil {
		return nil, fmt.Errorf("program of device %d: %w", p.Device, err)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// writeLines writes `  "name": [` and one JSON value per line.
func writeLines[T any](b *bytes.Buffer, name string, xs []T, after string) error {
	fmt.Fprintf(b, "  %q: [", name)
	for i, x := range xs {
		j, err := marshal(x)
		if err != nil {
			return fmt.Errorf("%s %d: %w", name, i, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(j)
	}
	if len(xs) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]" + after + "\n")
	return nil
}

// ParseProgram decodes a program file strictly (unknown fields are errors).
// It checks the program's own shape; Check checks a set of programs.
func ParseProgram(data []byte) (*Program, error) {
	var p Program
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("program: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("program: data after the program object")
	}
	if !slices.Contains(Modes(), p.Mode) {
		return nil, fmt.Errorf("program of device %d: unknown mode %q (want one of %v)", p.Device, p.Mode, Modes())
	}
	if p.Devices < 1 || p.Device < 0 || p.Device >= p.Devices {
		return nil, fmt.Errorf("program: device %d out of range 0..%d", p.Device, p.Devices-1)
	}
	if p.MicroBatches < 1 {
		return nil, fmt.Errorf("program of device %d: micro_batches must be at least 1, got %d", p.Device, p.MicroBatches)
	}
	if err := p.checkLimits(); err != nil {
		return nil, fmt.Errorf("program of device %d: %w", p.Device, err)
	}
	return &p, nil
}

// checkLimits refuses sizes past tessel's limits (package limits): the
// simulator's sums of times stay far from overflow.
func (p *Program) checkLimits() error {
	for _, c := range []struct {
		what       string
		got, limit int
	}{{"devices", p.Devices, limits.Devices}, {"micro-batches", p.MicroBatches, limits.MicroBatches},
		{"blocks", len(p.Blocks), limits.Blocks}, {"ops", len(p.Ops), 8 * limits.Instances}} {
		if err := limits.Check(c.what, c.got, c.limit); err != nil {
			return err
		}
	}
	if err := limits.CheckName("placement name", p.Placement); err != nil {
		return err
	}
	for _, b := range p.Blocks {
		if err := limits.CheckName("block id", b.ID); err != nil {
			return err
		}
		if b.Time < 1 || b.Time > limits.Time {
			return fmt.Errorf("block %q: time must be in 1..%d, got %d", b.ID, limits.Time, b.Time)
		}
	}
	return nil
}

// Text is the program in the text form of Op.String, one op per line after
// a header line.
func (p *Program) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s device %d of %d, %s, %d micro-batches\n", textfmt.OneLine(p.Placement), p.Device, p.Devices, p.Mode, p.MicroBatches)
	for _, o := range p.Ops {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// FileName is the name of device d's program file.
func FileName(d int) string { return fmt.Sprintf("rank%d.json", d) }
