// Package smt is tessel's bridge to the Z3 SMT solver: a thin cgo binding
// to the system's libz3 (integer and Boolean terms, a solver with
// push/pop, models, interruption through context.Context) and, on top of
// it, the encoder of scheduling problems — tasks with times, devices and
// memory, precedences, exclusive devices, a per-device memory budget —
// and the time-optimal search by binary search on the makespan.
//
// It knows nothing of placements or micro-batches: package repetend and
// package completion translate those into Problems. Nothing it returns is
// trusted; package schedule verifies every schedule independently.
//
// A Context is not safe for concurrent use: each goroutine owns its own.
// Contexts hold C memory and must be closed.
package smt

/*
#cgo pkg-config: z3
#include <stdlib.h>
#include <z3.h>

static Z3_context tessel_mk_context(void) {
	Z3_config cfg = Z3_mk_config();
	Z3_set_param_value(cfg, "model", "true");
	Z3_context c = Z3_mk_context(cfg);
	Z3_del_config(cfg);
	// With no handler, errors are recorded and read back with
	// Z3_get_error_code instead of aborting the process.
	Z3_set_error_handler(c, NULL);
	return c;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// ErrInterrupted is returned by Check when its context was cancelled or
// its deadline passed; errors.Is also matches the context's own error.
var ErrInterrupted = errors.New("smt: solver interrupted")

// ErrEffort is returned by Check when it ran out of its Effort.
var ErrEffort = errors.New("smt: solver effort exhausted")

// Context owns a Z3 context and everything made in it. Terms of one
// Context must not be used with another.
type Context struct {
	c      C.Z3_context
	intS   C.Z3_sort
	boolS  C.Z3_sort
	closed bool
	err    error // first Z3 error seen while building terms
}

// Int is an integer term.
type Int struct{ a C.Z3_ast }

// Bool is a Boolean term.
type Bool struct{ a C.Z3_ast }

// NewContext makes a fresh Z3 context. Close it when done.
func NewContext() *Context {
	x := &Context{c: C.tessel_mk_context()}
	x.intS = C.Z3_mk_int_sort(x.c)
	x.boolS = C.Z3_mk_bool_sort(x.c)
	return x
}

// Close frees the context and every term, solver and model made in it.
// It is safe to call twice.
func (x *Context) Close() {
	if x.closed {
		return
	}
	x.closed = true
	C.Z3_del_context(x.c)
}

// check returns Z3's error of the last call, if any.
func (x *Context) check(op string) error {
	code := C.Z3_get_error_code(x.c)
	if code == C.Z3_OK {
		return nil
	}
	msg := C.GoString(C.Z3_get_error_msg(x.c, code))
	return fmt.Errorf("smt: z3 %s: %s", op, msg)
}

// ast checks a term Z3 just made: Z3 returns NULL on error (an ill-sorted
// term), and the next call would clear the error, so it is recorded here
// and every later Check fails with it.
func (x *Context) ast(op string, a C.Z3_ast) C.Z3_ast {
	if a == nil && x.err == nil {
		if err := x.check(op); err != nil {
			x.err = err
		} else {
			x.err = fmt.Errorf("smt: z3 %s failed", op)
		}
	}
	return a
}

// args refuses zero-value terms (never made by a Context), which libz3
// would dereference.
func (x *Context) args(op string, as ...C.Z3_ast) bool {
	for _, a := range as {
		if a == nil {
			if x.err == nil {
				x.err = fmt.Errorf("smt: %s of a term that was never made", op)
			}
			return false
		}
	}
	return true
}

// Err returns the first error met while building terms, if any.
func (x *Context) Err() error { return x.err }

func (x *Context) sym(name string) C.Z3_symbol {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.Z3_mk_string_symbol(x.c, cs)
}

// IntVar declares an integer constant.
func (x *Context) IntVar(name string) Int {
	return Int{x.ast("mk_const", C.Z3_mk_const(x.c, x.sym(name), x.intS))}
}

// BoolVar declares a Boolean constant.
func (x *Context) BoolVar(name string) Bool {
	return Bool{x.ast("mk_const", C.Z3_mk_const(x.c, x.sym(name), x.boolS))}
}

// IntVal is the integer literal v.
func (x *Context) IntVal(v int) Int {
	return Int{x.ast("mk_int64", C.Z3_mk_int64(x.c, C.int64_t(v), x.intS))}
}

// True and False are the Boolean literals.
func (x *Context) True() Bool  { return Bool{C.Z3_mk_true(x.c)} }
func (x *Context) False() Bool { return Bool{C.Z3_mk_false(x.c)} }

func intArgs(ts []Int) []C.Z3_ast {
	out := make([]C.Z3_ast, len(ts))
	for i, t := range ts {
		out[i] = t.a
	}
	return out
}

func boolArgs(ts []Bool) []C.Z3_ast {
	out := make([]C.Z3_ast, len(ts))
	for i, t := range ts {
		out[i] = t.a
	}
	return out
}

// Add is the sum of its terms (0 when empty).
func (x *Context) Add(ts ...Int) Int {
	switch len(ts) {
	case 0:
		return x.IntVal(0)
	case 1:
		return ts[0]
	}
	args := intArgs(ts)
	if !x.args("add", args...) {
		return Int{}
	}
	return Int{x.ast("mk_add", C.Z3_mk_add(x.c, C.uint(len(args)), &args[0]))}
}

// Sub is a − b.
func (x *Context) Sub(a, b Int) Int {
	args := []C.Z3_ast{a.a, b.a}
	if !x.args("sub", args...) {
		return Int{}
	}
	return Int{x.ast("mk_sub", C.Z3_mk_sub(x.c, 2, &args[0]))}
}

// Mul is a · b (linear when one side is a literal).
func (x *Context) Mul(a, b Int) Int {
	args := []C.Z3_ast{a.a, b.a}
	if !x.args("mul", args...) {
		return Int{}
	}
	return Int{x.ast("mk_mul", C.Z3_mk_mul(x.c, 2, &args[0]))}
}

// Scale is k · a.
func (x *Context) Scale(k int, a Int) Int {
	switch k {
	case 0:
		return x.IntVal(0)
	case 1:
		return a
	}
	return x.Mul(x.IntVal(k), a)
}

// Plus is a + k.
func (x *Context) Plus(a Int, k int) Int {
	if k == 0 {
		return a
	}
	return x.Add(a, x.IntVal(k))
}

// Le, Lt, Ge, Gt and Eq compare integers.
func (x *Context) Le(a, b Int) Bool { return x.compare("le", a, b) }
func (x *Context) Lt(a, b Int) Bool { return x.compare("lt", a, b) }
func (x *Context) Ge(a, b Int) Bool { return x.compare("ge", a, b) }
func (x *Context) Gt(a, b Int) Bool { return x.compare("gt", a, b) }
func (x *Context) Eq(a, b Int) Bool { return x.compare("eq", a, b) }

func (x *Context) compare(op string, a, b Int) Bool {
	if !x.args(op, a.a, b.a) {
		return Bool{}
	}
	var r C.Z3_ast
	switch op {
	case "le":
		r = C.Z3_mk_le(x.c, a.a, b.a)
	case "lt":
		r = C.Z3_mk_lt(x.c, a.a, b.a)
	case "ge":
		r = C.Z3_mk_ge(x.c, a.a, b.a)
	case "gt":
		r = C.Z3_mk_gt(x.c, a.a, b.a)
	default:
		r = C.Z3_mk_eq(x.c, a.a, b.a)
	}
	return Bool{x.ast("mk_"+op, r)}
}

// Ite is "if c then a else b".
func (x *Context) Ite(c Bool, a, b Int) Int {
	if !x.args("ite", c.a, a.a, b.a) {
		return Int{}
	}
	return Int{x.ast("mk_ite", C.Z3_mk_ite(x.c, c.a, a.a, b.a))}
}

// And, Or, Not and Implies combine Booleans.
func (x *Context) And(ts ...Bool) Bool {
	switch len(ts) {
	case 0:
		return x.True()
	case 1:
		return ts[0]
	}
	args := boolArgs(ts)
	if !x.args("and", args...) {
		return Bool{}
	}
	return Bool{x.ast("mk_and", C.Z3_mk_and(x.c, C.uint(len(args)), &args[0]))}
}

func (x *Context) Or(ts ...Bool) Bool {
	switch len(ts) {
	case 0:
		return x.False()
	case 1:
		return ts[0]
	}
	args := boolArgs(ts)
	if !x.args("or", args...) {
		return Bool{}
	}
	return Bool{x.ast("mk_or", C.Z3_mk_or(x.c, C.uint(len(args)), &args[0]))}
}

func (x *Context) Not(a Bool) Bool {
	if !x.args("not", a.a) {
		return Bool{}
	}
	return Bool{x.ast("mk_not", C.Z3_mk_not(x.c, a.a))}
}

func (x *Context) Implies(a, b Bool) Bool {
	if !x.args("implies", a.a, b.a) {
		return Bool{}
	}
	return Bool{x.ast("mk_implies", C.Z3_mk_implies(x.c, a.a, b.a))}
}

// PbLe is the pseudo-Boolean constraint Σ coeffs[i]·[bs[i]] ≤ k.
func (x *Context) PbLe(bs []Bool, coeffs []int, k int) Bool {
	if len(bs) != len(coeffs) {
		if x.err == nil {
			x.err = fmt.Errorf("smt: pble of %d terms with %d coefficients", len(bs), len(coeffs))
		}
		return Bool{}
	}
	if len(bs) == 0 {
		if 0 <= k {
			return x.True()
		}
		return x.False()
	}
	args := boolArgs(bs)
	if !x.args("pble", args...) {
		return Bool{}
	}
	cs := make([]C.int, len(coeffs))
	for i, v := range coeffs {
		cs[i] = C.int(v)
	}
	return Bool{x.ast("mk_pble", C.Z3_mk_pble(x.c, C.uint(len(args)), &args[0], &cs[0], C.int(k)))}
}

// String prints a term in SMT-LIB syntax, for debugging and tests.
func (x *Context) String(t Bool) string { return x.text(t.a) }

func (x *Context) text(a C.Z3_ast) string {
	if a == nil {
		return "<unmade term>"
	}
	return C.GoString(C.Z3_ast_to_string(x.c, a))
}

// Status is the answer of a satisfiability check.
type Status int

const (
	Unknown Status = iota
	Sat
	Unsat
)

func (s Status) String() string {
	switch s {
	case Sat:
		return "sat"
	case Unsat:
		return "unsat"
	}
	return "unknown"
}

// Solver is an incremental Z3 solver of one Context.
type Solver struct {
	x      *Context
	s      C.Z3_solver
	effort int
}

// SolverOptions configure a solver. Zero values keep Z3's defaults.
type SolverOptions struct {
	Seed int // random seed; the same seed and problem give the same answer
	// Effort caps every check by Z3's resource counter (its "rlimit"),
	// 0 meaning no cap. Unlike a timeout it is deterministic: the same
	// problem stops at the same point on every run.
	Effort int
}

// NewSolver makes a solver in the context.
func (x *Context) NewSolver(opt SolverOptions) (*Solver, error) {
	s := C.Z3_mk_solver(x.c)
	if err := x.check("mk_solver"); err != nil {
		return nil, err
	}
	C.Z3_solver_inc_ref(x.c, s)
	sv := &Solver{x: x, s: s, effort: opt.Effort}
	p := C.Z3_mk_params(x.c)
	C.Z3_params_inc_ref(x.c, p)
	defer C.Z3_params_dec_ref(x.c, p)
	C.Z3_params_set_uint(x.c, p, x.sym("random_seed"), C.uint(opt.Seed))
	// Z3 would otherwise catch Ctrl-C itself during a check, end only
	// that check and swallow the signal, so the program would go on.
	C.Z3_params_set_bool(x.c, p, x.sym("ctrl_c"), false)
	if opt.Effort > 0 {
		C.Z3_params_set_uint(x.c, p, x.sym("rlimit"), C.uint(opt.Effort))
	}
	C.Z3_solver_set_params(x.c, s, p)
	if err := x.check("solver_set_params"); err != nil {
		sv.Close()
		return nil, err
	}
	return sv, nil
}

// SetEffort changes the cap of the next checks (0: none).
func (s *Solver) SetEffort(effort int) {
	x := s.x
	p := C.Z3_mk_params(x.c)
	C.Z3_params_inc_ref(x.c, p)
	defer C.Z3_params_dec_ref(x.c, p)
	C.Z3_params_set_uint(x.c, p, x.sym("rlimit"), C.uint(effort))
	C.Z3_solver_set_params(x.c, s.s, p)
	s.effort = effort
}

// Close releases the solver; the context frees it anyway when closed.
func (s *Solver) Close() {
	if s.s != nil && !s.x.closed {
		C.Z3_solver_dec_ref(s.x.c, s.s)
	}
	s.s = nil
}

// Assert adds constraints. A term that failed to build is not passed to
// Z3; its error comes back from the next Check.
func (s *Solver) Assert(bs ...Bool) {
	for _, b := range bs {
		if !s.x.args("assert", b.a) {
			continue
		}
		C.Z3_solver_assert(s.x.c, s.s, b.a)
	}
}

// Push opens a scope; Pop drops the assertions made since.
func (s *Solver) Push() { C.Z3_solver_push(s.x.c, s.s) }
func (s *Solver) Pop()  { C.Z3_solver_pop(s.x.c, s.s, 1) }

// watcher serialises Z3_interrupt with the end of a check, so that an
// interrupt never reaches a context after its check returned.
type watcher struct {
	mu   sync.Mutex
	done bool
}

// Check decides the assertions. When ctx is cancelled or its deadline
// passes, the running check is interrupted and Check returns Unknown with
// an error wrapping both ErrInterrupted and ctx.Err().
func (s *Solver) Check(ctx context.Context) (Status, error) {
	if err := s.x.err; err != nil {
		return Unknown, err
	}
	if err := ctx.Err(); err != nil {
		return Unknown, errors.Join(ErrInterrupted, err)
	}
	w := &watcher{}
	stop := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stop:
			return
		}
		// Repeat: an interrupt that lands before Z3 enters the check is
		// forgotten when the check starts.
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			w.mu.Lock()
			if !w.done {
				C.Z3_interrupt(s.x.c)
			}
			w.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	// Z3 runs on this OS thread for the whole check.
	runtime.LockOSThread()
	r := C.Z3_solver_check(s.x.c, s.s)
	runtime.UnlockOSThread()
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	close(stop)
	if err := s.x.check("solver_check"); err != nil {
		return Unknown, err
	}
	switch r {
	case C.Z3_L_TRUE:
		return Sat, nil
	case C.Z3_L_FALSE:
		return Unsat, nil
	}
	if err := ctx.Err(); err != nil {
		return Unknown, errors.Join(ErrInterrupted, err)
	}
	reason := C.GoString(C.Z3_solver_get_reason_unknown(s.x.c, s.s))
	// Z3 4.8 reports an exhausted rlimit as "canceled", like an interrupt;
	// the context tells them apart.
	if s.effort > 0 && (reason == "canceled" || strings.Contains(reason, "resource")) {
		return Unknown, ErrEffort
	}
	return Unknown, fmt.Errorf("smt: solver gave up: %s", reason)
}

// Model is a satisfying assignment, valid until the solver changes.
type Model struct {
	x *Context
	m C.Z3_model
}

// Model returns the model of the last Sat check. Close it when done.
func (s *Solver) Model() (*Model, error) {
	m := C.Z3_solver_get_model(s.x.c, s.s)
	if err := s.x.check("solver_get_model"); err != nil {
		return nil, err
	}
	C.Z3_model_inc_ref(s.x.c, m)
	return &Model{x: s.x, m: m}, nil
}

// Close releases the model.
func (m *Model) Close() {
	if m.m != nil && !m.x.closed {
		C.Z3_model_dec_ref(m.x.c, m.m)
	}
	m.m = nil
}

// Int evaluates an integer term, completing unconstrained variables.
func (m *Model) Int(t Int) (int, error) {
	var out C.Z3_ast
	if !C.Z3_model_eval(m.x.c, m.m, t.a, true, &out) {
		return 0, fmt.Errorf("smt: cannot evaluate %s", m.x.text(t.a))
	}
	var v C.int64_t
	if !C.Z3_get_numeral_int64(m.x.c, out, &v) {
		return 0, fmt.Errorf("smt: %s is not an integer numeral", C.GoString(C.Z3_ast_to_string(m.x.c, out)))
	}
	return int(v), m.x.check("model_eval")
}

// Bool evaluates a Boolean term.
func (m *Model) Bool(t Bool) (bool, error) {
	var out C.Z3_ast
	if !C.Z3_model_eval(m.x.c, m.m, t.a, true, &out) {
		return false, fmt.Errorf("smt: cannot evaluate %s", m.x.String(t))
	}
	switch C.Z3_get_bool_value(m.x.c, out) {
	case C.Z3_L_TRUE:
		return true, nil
	case C.Z3_L_FALSE:
		return false, nil
	}
	return false, fmt.Errorf("smt: %s is not a Boolean value", C.GoString(C.Z3_ast_to_string(m.x.c, out)))
}

// Version is the version of the linked libz3, e.g. "4.8.12".
func Version() string {
	var major, minor, build, rev C.uint
	C.Z3_get_version(&major, &minor, &build, &rev)
	return strconv.Itoa(int(major)) + "." + strconv.Itoa(int(minor)) + "." + strconv.Itoa(int(build))
}
