// Package z3 is tessel's cgo binding to the Z3 SMT solver, and nothing
// more: integer and Boolean terms, a solver with push/pop, models, and
// interruption through context.Context, over the system's libz3. It is
// the only package of the module that imports "C". Package smt builds
// scheduling problems on it; package encode turns placements into those
// problems.
//
// Its errors keep the prefix "smt:" they had when the binding lived in
// package smt: they reach people through the search's messages, which
// stay as they were.
//
// A Context is not safe for concurrent use: each goroutine owns its own.
// Contexts hold C memory and must be closed.
//
// # Lifetimes
//
// Contexts count references (Z3_mk_context_rc), so that a long search in
// one Context keeps a flat memory. Every term the Go side holds owns one
// Z3 reference, and the Context owns the terms: it keeps them on a stack
// and releases them in batches, never behind the caller's back:
//
//   - a term made while a solver scope is open (after Push, before the
//     matching Pop; the innermost open scope of the Context, whichever
//     solver opened it) is released when that scope is popped;
//   - a term made outside any scope lives until the Context is closed.
//
// So the assertions of one Push/Pop round cost nothing once it is popped,
// and the encoding made before the first Push stays usable throughout.
// Terms are small values (a Context, a slot, a serial number); a term
// whose scope was popped, a term of another Context, a zero-value term, or
// anything done with a closed Context, Solver or Model is an error — kept
// by the Context (Err) and returned by the next Check, or returned at once
// by calls that return errors — never a crash. Every Close is idempotent.
// Solvers and models count their own references and are released by
// their Close (and all at once by the Context's).
//
// Scopes rather than a cleanup per term (runtime.AddCleanup): cleanups
// run on another goroutine while a Context is single-threaded, the memory
// kept would follow the garbage collector's pace instead of the search's,
// and a cleanup costs more than the term it frees.
//
// A Context is not cheap to make: Z3 allocates and fills an 8 MB table
// for each (see package z3/tune), so a long search keeps its Context
// and works in scopes.
package z3

/*
#cgo pkg-config: z3
#include <stdint.h>
#include <stdlib.h>
#include <z3.h>

static Z3_context tessel_mk_context(void) {
	Z3_config cfg = Z3_mk_config();
	Z3_set_param_value(cfg, "model", "true");
	Z3_context c = Z3_mk_context_rc(cfg);
	Z3_del_config(cfg);
	// With no handler, errors are recorded and read back with
	// Z3_get_error_code instead of aborting the process.
	Z3_set_error_handler(c, NULL);
	return c;
}

// The term constructors: one cgo call makes a term and takes the Go
// side's reference to it (a fresh term has none and would die at the next
// call of the API).
enum {
	OP_INT_CONST, OP_BOOL_CONST, OP_NUMERAL, OP_TRUE, OP_FALSE,
	OP_ADD, OP_SUB, OP_MUL, OP_LE, OP_LT, OP_GE, OP_GT, OP_EQ,
	OP_ITE, OP_AND, OP_OR, OP_NOT, OP_IMPLIES, OP_PBLE,
};

static Z3_ast tessel_mk(Z3_context c, int op, const char *name, Z3_sort s,
		unsigned n, const Z3_ast *a, const int *coeffs, int64_t k) {
	Z3_ast r = NULL;
	switch (op) {
	case OP_INT_CONST:
	case OP_BOOL_CONST:
		r = Z3_mk_const(c, Z3_mk_string_symbol(c, name), s);
		break;
	case OP_NUMERAL: r = Z3_mk_int64(c, k, s); break;
	case OP_TRUE: r = Z3_mk_true(c); break;
	case OP_FALSE: r = Z3_mk_false(c); break;
	case OP_ADD: r = Z3_mk_add(c, n, a); break;
	case OP_SUB: r = Z3_mk_sub(c, n, a); break;
	case OP_MUL: r = Z3_mk_mul(c, n, a); break;
	case OP_LE: r = Z3_mk_le(c, a[0], a[1]); break;
	case OP_LT: r = Z3_mk_lt(c, a[0], a[1]); break;
	case OP_GE: r = Z3_mk_ge(c, a[0], a[1]); break;
	case OP_GT: r = Z3_mk_gt(c, a[0], a[1]); break;
	case OP_EQ: r = Z3_mk_eq(c, a[0], a[1]); break;
	case OP_ITE: r = Z3_mk_ite(c, a[0], a[1], a[2]); break;
	case OP_AND: r = Z3_mk_and(c, n, a); break;
	case OP_OR: r = Z3_mk_or(c, n, a); break;
	case OP_NOT: r = Z3_mk_not(c, a[0]); break;
	case OP_IMPLIES: r = Z3_mk_implies(c, a[0], a[1]); break;
	case OP_PBLE: r = Z3_mk_pble(c, n, a, coeffs, (int)k); break;
	}
	if (r != NULL) {
		Z3_inc_ref(c, r);
	}
	return r;
}

static Z3_sort tessel_keep_sort(Z3_context c, Z3_sort s) {
	if (s != NULL) {
		Z3_inc_ref(c, Z3_sort_to_ast(c, s));
	}
	return s;
}

static void tessel_drop_sort(Z3_context c, Z3_sort s) {
	if (s != NULL) {
		Z3_dec_ref(c, Z3_sort_to_ast(c, s));
	}
}

static void tessel_dec_refs(Z3_context c, unsigned n, const Z3_ast *a) {
	for (unsigned i = 0; i < n; i++) {
		Z3_dec_ref(c, a[i]);
	}
}

// Evaluation in a model: 0 done, 1 the model cannot evaluate the term,
// 2 the value is not of the asked kind. The value lives only until the
// next call of the API, so it is read here.
static int tessel_eval_int(Z3_context c, Z3_model m, Z3_ast a, int64_t *v) {
	Z3_ast out = NULL;
	if (!Z3_model_eval(c, m, a, true, &out) || out == NULL) {
		return 1;
	}
	return Z3_get_numeral_int64(c, out, v) ? 0 : 2;
}

static int tessel_eval_bool(Z3_context c, Z3_model m, Z3_ast a, int *v) {
	Z3_ast out = NULL;
	if (!Z3_model_eval(c, m, a, true, &out) || out == NULL) {
		return 1;
	}
	switch (Z3_get_bool_value(c, out)) {
	case Z3_L_TRUE: *v = 1; return 0;
	case Z3_L_FALSE: *v = 0; return 0;
	default: return 2;
	}
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

// ErrClosed is the error of any use of a closed Context, Solver or Model.
var ErrClosed = errors.New("smt: use after Close")

// Context owns a Z3 context and everything made in it. Terms of one
// Context must not be used with another.
type Context struct {
	c     C.Z3_context // nil once closed (or never made)
	intS  C.Z3_sort
	boolS C.Z3_sort
	err   error // first error seen while building terms

	held   []held  // the terms the Go side holds, one reference each
	serial uint64  // serial of the last term made
	scopes []scope // open solver scopes, innermost last
	buf    []C.Z3_ast
}

type held struct {
	a      C.Z3_ast
	serial uint64
}

// scope is one open Push: the terms from held[mark] on die at its Pop.
type scope struct {
	s    *Solver
	mark int
}

// term names a held term: its slot on the Context's stack and the serial
// the slot had when the term was made, so that a slot reused after a Pop
// is told apart from the term that had it.
type term struct {
	x      *Context
	slot   uint32
	serial uint64
}

// Int is an integer term.
type Int struct{ t term }

// Bool is a Boolean term.
type Bool struct{ t term }

// NewContext makes a fresh Z3 context. Close it when done.
func NewContext() *Context {
	x := &Context{c: C.tessel_mk_context()}
	x.intS = C.tessel_keep_sort(x.c, C.Z3_mk_int_sort(x.c))
	x.boolS = C.tessel_keep_sort(x.c, C.Z3_mk_bool_sort(x.c))
	return x
}

// Close frees the context and every term, solver and model made in it.
// It is safe to call twice.
func (x *Context) Close() {
	if x == nil || x.c == nil {
		return
	}
	// Z3_del_context frees everything, but an AST still referenced counts
	// as leaked, and recovering leaks walks Z3's whole 8 MB table twice:
	// dropping the Go side's references first is cheaper. Solvers and
	// models need not be: the context deletes them before its terms.
	x.release(0)
	C.tessel_drop_sort(x.c, x.intS)
	C.tessel_drop_sort(x.c, x.boolS)
	C.Z3_del_context(x.c)
	x.c = nil
	x.held, x.scopes, x.buf = nil, nil, nil
}

// Err returns the first error met while building terms or using the
// context after Close, if any.
func (x *Context) Err() error { return x.err }

func (x *Context) fail(err error) {
	if x.err == nil {
		x.err = err
	}
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

// resolve returns the AST of a term the Go side may still use, or nil
// (recording why) when it was never made, belongs to another context, or
// was released with its scope.
func (x *Context) resolve(op string, t term) C.Z3_ast {
	switch {
	case x.c == nil:
		x.fail(fmt.Errorf("smt: %s: %w of the context", op, ErrClosed))
	case t.x == nil:
		x.fail(fmt.Errorf("smt: %s of a term that was never made", op))
	case t.x != x:
		x.fail(fmt.Errorf("smt: %s of a term of another context", op))
	case int(t.slot) >= len(x.held) || x.held[t.slot].serial != t.serial:
		x.fail(fmt.Errorf("smt: %s of a term released by the Pop of its scope", op))
	default:
		return x.held[t.slot].a
	}
	return nil
}

// args resolves terms into x.buf; ok is false when any cannot be used.
func (x *Context) args(op string, ts ...term) ([]C.Z3_ast, bool) {
	x.buf = x.buf[:0]
	for _, t := range ts {
		a := x.resolve(op, t)
		if a == nil {
			return nil, false
		}
		x.buf = append(x.buf, a)
	}
	return x.buf, true
}

// mkTerm is what one kind of term takes (mk): a constant's name and sort,
// an application's arguments, a pseudo-Boolean's coefficients and bound
// k (or a numeral's value).
type mkTerm struct {
	name   string
	sort   C.Z3_sort
	args   []C.Z3_ast
	coeffs []C.int
	k      int64
}

// mk makes a term in Z3 and holds it. A term that failed (Z3 returns NULL
// for an ill-sorted term, and the next call would clear the error) is
// recorded, so that every later Check fails with it.
func (x *Context) mk(op int, opName string, t mkTerm) term {
	name, s, args, coeffs, k := t.name, t.sort, t.args, t.coeffs, t.k
	if x.c == nil {
		x.fail(fmt.Errorf("smt: %s: %w of the context", opName, ErrClosed))
		return term{}
	}
	var cname *C.char
	if op == C.OP_INT_CONST || op == C.OP_BOOL_CONST {
		// A Go buffer ending in NUL: no C allocation per name.
		b := make([]byte, len(name)+1)
		copy(b, name)
		cname = (*C.char)(unsafe.Pointer(&b[0]))
	}
	var pa *C.Z3_ast
	if len(args) > 0 {
		pa = &args[0]
	}
	var pc *C.int
	if len(coeffs) > 0 {
		pc = &coeffs[0]
	}
	a := C.tessel_mk(x.c, C.int(op), cname, s, C.uint(len(args)), pa, pc, C.int64_t(k))
	if a == nil {
		if err := x.check("mk_" + opName); err != nil {
			x.fail(err)
		} else {
			x.fail(fmt.Errorf("smt: z3 mk_%s failed", opName))
		}
		return term{}
	}
	x.serial++
	x.held = append(x.held, held{a: a, serial: x.serial})
	return term{x: x, slot: uint32(len(x.held) - 1), serial: x.serial}
}

// release drops the Go side's references to the terms from held[mark] on.
func (x *Context) release(mark int) {
	if mark >= len(x.held) {
		return
	}
	x.buf = x.buf[:0]
	for _, h := range x.held[mark:] {
		x.buf = append(x.buf, h.a)
	}
	C.tessel_dec_refs(x.c, C.uint(len(x.buf)), &x.buf[0])
	clear(x.held[mark:])
	x.held = x.held[:mark]
}

// IntVar declares an integer constant.
func (x *Context) IntVar(name string) Int {
	return Int{x.mk(C.OP_INT_CONST, "const", mkTerm{name: name, sort: x.intS})}
}

// BoolVar declares a Boolean constant.
func (x *Context) BoolVar(name string) Bool {
	return Bool{x.mk(C.OP_BOOL_CONST, "const", mkTerm{name: name, sort: x.boolS})}
}

// IntVal is the integer literal v.
func (x *Context) IntVal(v int) Int {
	return Int{x.mk(C.OP_NUMERAL, "int64", mkTerm{sort: x.intS, k: int64(v)})}
}

// True and False are the Boolean literals.
func (x *Context) True() Bool  { return Bool{x.mk(C.OP_TRUE, "true", mkTerm{})} }
func (x *Context) False() Bool { return Bool{x.mk(C.OP_FALSE, "false", mkTerm{})} }

// apply makes op of the given terms.
func (x *Context) apply(op int, opName string, ts ...term) term {
	args, ok := x.args(opName, ts...)
	if !ok {
		return term{}
	}
	return x.mk(op, opName, mkTerm{args: args})
}

// argList resolves a list of terms into x.buf, as args does.
func argList[T Int | Bool](x *Context, op string, ts []T) ([]C.Z3_ast, bool) {
	x.buf = x.buf[:0]
	for _, t := range ts {
		a := x.resolve(op, struct{ t term }(t).t)
		if a == nil {
			return nil, false
		}
		x.buf = append(x.buf, a)
	}
	return x.buf, true
}

// applyList makes op of a list of terms.
func applyList[T Int | Bool](x *Context, op int, opName string, ts []T) term {
	args, ok := argList(x, opName, ts)
	if !ok {
		return term{}
	}
	return x.mk(op, opName, mkTerm{args: args})
}

// Add is the sum of its terms (0 when empty).
func (x *Context) Add(ts ...Int) Int {
	switch len(ts) {
	case 0:
		return x.IntVal(0)
	case 1:
		return ts[0]
	}
	return Int{applyList(x, C.OP_ADD, "add", ts)}
}

// Sub is a − b.
func (x *Context) Sub(a, b Int) Int { return Int{x.apply(C.OP_SUB, "sub", a.t, b.t)} }

// Mul is a · b (linear when one side is a literal).
func (x *Context) Mul(a, b Int) Int { return Int{x.apply(C.OP_MUL, "mul", a.t, b.t)} }

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
func (x *Context) Le(a, b Int) Bool { return Bool{x.apply(C.OP_LE, "le", a.t, b.t)} }
func (x *Context) Lt(a, b Int) Bool { return Bool{x.apply(C.OP_LT, "lt", a.t, b.t)} }
func (x *Context) Ge(a, b Int) Bool { return Bool{x.apply(C.OP_GE, "ge", a.t, b.t)} }
func (x *Context) Gt(a, b Int) Bool { return Bool{x.apply(C.OP_GT, "gt", a.t, b.t)} }
func (x *Context) Eq(a, b Int) Bool { return Bool{x.apply(C.OP_EQ, "eq", a.t, b.t)} }

// Ite is "if c then a else b".
func (x *Context) Ite(c Bool, a, b Int) Int { return Int{x.apply(C.OP_ITE, "ite", c.t, a.t, b.t)} }

// And, Or, Not and Implies combine Booleans.
func (x *Context) And(ts ...Bool) Bool {
	switch len(ts) {
	case 0:
		return x.True()
	case 1:
		return ts[0]
	}
	return Bool{applyList(x, C.OP_AND, "and", ts)}
}

func (x *Context) Or(ts ...Bool) Bool {
	switch len(ts) {
	case 0:
		return x.False()
	case 1:
		return ts[0]
	}
	return Bool{applyList(x, C.OP_OR, "or", ts)}
}

func (x *Context) Not(a Bool) Bool { return Bool{x.apply(C.OP_NOT, "not", a.t)} }

func (x *Context) Implies(a, b Bool) Bool {
	return Bool{x.apply(C.OP_IMPLIES, "implies", a.t, b.t)}
}

// PbLe is the pseudo-Boolean constraint Σ coeffs[i]·[bs[i]] ≤ k.
func (x *Context) PbLe(bs []Bool, coeffs []int, k int) Bool {
	if len(bs) != len(coeffs) {
		x.fail(fmt.Errorf("smt: pble of %d terms with %d coefficients", len(bs), len(coeffs)))
		return Bool{}
	}
	if len(bs) == 0 {
		if 0 <= k {
			return x.True()
		}
		return x.False()
	}
	args, ok := argList(x, "pble", bs)
	if !ok {
		return Bool{}
	}
	cs := make([]C.int, len(coeffs))
	for i, v := range coeffs {
		cs[i] = C.int(v)
	}
	return Bool{x.mk(C.OP_PBLE, "pble", mkTerm{args: args, coeffs: cs, k: int64(k)})}
}

// String prints a term in SMT-LIB syntax, for debugging and tests.
func (x *Context) String(t Bool) string { return x.text(t.t) }

func (x *Context) text(t term) string {
	switch {
	case x.c == nil:
		return "<closed context>"
	case t.x == nil:
		return "<unmade term>"
	case t.x != x || int(t.slot) >= len(x.held) || x.held[t.slot].serial != t.serial:
		return "<released term>"
	}
	return C.GoString(C.Z3_ast_to_string(x.c, x.held[t.slot].a))
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
	s      C.Z3_solver // nil once closed
	effort int
	depth  int   // open scopes
	err    error // first misuse of this solver (after Close, Pop without Push)
}

// SolverOptions configure a solver. Zero values keep Z3's defaults.
type SolverOptions struct {
	Seed int // random seed; the same seed and problem give the same answer
	// Effort caps every check by Z3's resource counter (its "rlimit"),
	// 0 meaning no cap. Unlike a timeout it is deterministic: the same
	// problem stops at the same point on every run.
	Effort int
}

func (x *Context) sym(name string) C.Z3_symbol {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.Z3_mk_string_symbol(x.c, cs)
}

// NewSolving makes a context and one solver in it with opt, the pair a
// one-shot problem sets up; closing the context frees both (a failed
// solver's context is closed here).
func NewSolving(opt SolverOptions) (*Context, *Solver, error) {
	x := NewContext()
	s, err := x.NewSolver(opt)
	if err != nil {
		x.Close()
		return nil, nil, err
	}
	return x, s, nil
}

// NewSolver makes a solver in the context.
func (x *Context) NewSolver(opt SolverOptions) (*Solver, error) {
	if x.c == nil {
		return nil, fmt.Errorf("smt: new solver: %w of the context", ErrClosed)
	}
	s := C.Z3_mk_solver(x.c)
	if err := x.check("mk_solver"); err != nil {
		return nil, err
	}
	C.Z3_solver_inc_ref(x.c, s)
	sv := &Solver{x: x, s: s}
	if err := sv.setParams(opt.Seed, opt.Effort); err != nil {
		sv.Close()
		return nil, err
	}
	return sv, nil
}

// setParams sets the random seed (seed ≥ 0) and the effort cap.
func (s *Solver) setParams(seed, effort int) error {
	x := s.x
	p := C.Z3_mk_params(x.c)
	C.Z3_params_inc_ref(x.c, p)
	defer C.Z3_params_dec_ref(x.c, p)
	if seed >= 0 {
		C.Z3_params_set_uint(x.c, p, x.sym("random_seed"), C.uint(seed))
		// Z3 would otherwise catch Ctrl-C itself during a check, end
		// only that check and swallow the signal, so the program would
		// go on.
		C.Z3_params_set_bool(x.c, p, x.sym("ctrl_c"), false)
	}
	if effort > 0 || seed < 0 {
		C.Z3_params_set_uint(x.c, p, x.sym("rlimit"), C.uint(effort))
	}
	C.Z3_solver_set_params(x.c, s.s, p)
	if err := x.check("solver_set_params"); err != nil {
		return err
	}
	s.effort = effort
	return nil
}

// usable reports whether the solver and its context are open, recording
// the misuse otherwise.
func (s *Solver) usable(op string) bool {
	switch {
	case s.x == nil || s.x.c == nil:
		s.failf("smt: %s: %w of the context", op, ErrClosed)
	case s.s == nil:
		s.failf("smt: %s: %w of the solver", op, ErrClosed)
	default:
		return true
	}
	return false
}

func (s *Solver) failf(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
	}
}

// SetEffort changes the cap of the next checks (0: none).
func (s *Solver) SetEffort(effort int) {
	if !s.usable("set effort") {
		return
	}
	if err := s.setParams(-1, effort); err != nil {
		s.failf("smt: set effort: %w", err)
	}
}

// Close releases the solver; the context frees it anyway when closed.
// Its open scopes are forgotten: their terms live until the context is
// closed.
func (s *Solver) Close() {
	if s == nil || s.s == nil {
		return
	}
	x := s.x
	if x.c != nil {
		C.Z3_solver_dec_ref(x.c, s.s)
		kept := x.scopes[:0]
		for _, sc := range x.scopes {
			if sc.s != s {
				kept = append(kept, sc)
			}
		}
		x.scopes = kept
	}
	s.s = nil
	s.depth = 0
}

// Assert adds constraints. A term that cannot be used is not passed to
// Z3; its error comes back from the next Check.
func (s *Solver) Assert(bs ...Bool) {
	if !s.usable("assert") {
		return
	}
	x := s.x
	for _, b := range bs {
		a := x.resolve("assert", b.t)
		if a == nil {
			continue
		}
		C.Z3_solver_assert(x.c, s.s, a)
	}
}

// Push opens a scope; Pop drops the assertions made since, and releases
// the terms made since (see Lifetimes in the package doc).
func (s *Solver) Push() {
	if !s.usable("push") {
		return
	}
	C.Z3_solver_push(s.x.c, s.s)
	s.depth++
	s.x.scopes = append(s.x.scopes, scope{s: s, mark: len(s.x.held)})
}

func (s *Solver) Pop() {
	if !s.usable("pop") {
		return
	}
	if s.depth == 0 {
		s.failf("smt: pop without push")
		return
	}
	x := s.x
	C.Z3_solver_pop(x.c, s.s, 1)
	s.depth--
	// This solver's innermost scope. When scopes of several solvers
	// interleave and it is not the Context's innermost, its terms stay
	// until an enclosing scope is popped or the Context closed.
	for k := len(x.scopes) - 1; k >= 0; k-- {
		if x.scopes[k].s != s {
			continue
		}
		if k == len(x.scopes)-1 {
			x.release(x.scopes[k].mark)
		}
		x.scopes = append(x.scopes[:k], x.scopes[k+1:]...)
		break
	}
}

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
	s.usable("check")
	if s.err != nil {
		return Unknown, s.err
	}
	if err := s.x.err; err != nil {
		return Unknown, err
	}
	if err := ctx.Err(); err != nil {
		return Unknown, errors.Join(ErrInterrupted, err)
	}
	x := s.x
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
				C.Z3_interrupt(x.c)
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
	r := C.Z3_solver_check(x.c, s.s)
	runtime.UnlockOSThread()
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	close(stop)
	if err := x.check("solver_check"); err != nil {
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
	reason := C.GoString(C.Z3_solver_get_reason_unknown(x.c, s.s))
	// Z3 4.8 reports an exhausted rlimit as "canceled", like an interrupt
	// (the context tells them apart), or, when it runs out before the
	// search proper (a cap of a few units), as "unknown". Our encodings
	// are linear integer arithmetic, where Z3 is complete: under a cap,
	// "unknown" is the cap's.
	if s.effort > 0 && (reason == "canceled" || reason == "unknown" || strings.Contains(reason, "resource")) {
		return Unknown, ErrEffort
	}
	return Unknown, gaveUp(reason)
}

// ErrIncomplete is returned by Check when Z3 gave up on its own (a
// reason such as "incomplete (theory arithmetic)"): like ErrEffort the
// call decided nothing, so the error is ErrEffort too — every caller
// that keeps its best answer when the effort runs out keeps it here,
// never throwing the incumbent away.
var ErrIncomplete = errors.New("smt: solver gave up")

// gaveUp is ErrIncomplete with Z3's reason.
type gaveUp string

func (g gaveUp) Error() string { return "smt: solver gave up: " + string(g) }

func (g gaveUp) Is(target error) bool { return target == ErrIncomplete || target == ErrEffort }

// Model is a satisfying assignment. It keeps its own reference: it stays
// valid when the solver changes or is closed, until it or its Context is
// closed.
type Model struct {
	x *Context
	m C.Z3_model // nil once closed
}

// Model returns the model of the last Sat check. Close it when done.
func (s *Solver) Model() (*Model, error) {
	s.usable("model")
	if s.err != nil {
		return nil, s.err
	}
	m := C.Z3_solver_get_model(s.x.c, s.s)
	if err := s.x.check("solver_get_model"); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("smt: z3 solver_get_model: no model")
	}
	C.Z3_model_inc_ref(s.x.c, m)
	return &Model{x: s.x, m: m}, nil
}

// Close releases the model. It is safe to call twice.
func (m *Model) Close() {
	if m == nil || m.m == nil {
		return
	}
	if m.x.c != nil {
		C.Z3_model_dec_ref(m.x.c, m.m)
	}
	m.m = nil
}

// open returns the AST of t for evaluation, or an error.
func (m *Model) open(op string, t term) (C.Z3_ast, error) {
	switch {
	case m.x == nil || m.x.c == nil:
		return nil, fmt.Errorf("smt: %s: %w of the context", op, ErrClosed)
	case m.m == nil:
		return nil, fmt.Errorf("smt: %s: %w of the model", op, ErrClosed)
	}
	err0 := m.x.err
	a := m.x.resolve(op, t)
	if a == nil {
		err := m.x.err
		m.x.err = err0 // a bad argument here is this call's error only
		return nil, err
	}
	return a, nil
}

// Int evaluates an integer term, completing unconstrained variables.
func (m *Model) Int(t Int) (int, error) {
	a, err := m.open("evaluate", t.t)
	if err != nil {
		return 0, err
	}
	var v C.int64_t
	switch C.tessel_eval_int(m.x.c, m.m, a, &v) {
	case 1:
		return 0, fmt.Errorf("smt: cannot evaluate %s", m.x.text(t.t))
	case 2:
		return 0, fmt.Errorf("smt: %s is not an integer numeral", m.x.text(t.t))
	}
	return int(v), m.x.check("model_eval")
}

// Bool evaluates a Boolean term.
func (m *Model) Bool(t Bool) (bool, error) {
	a, err := m.open("evaluate", t.t)
	if err != nil {
		return false, err
	}
	var v C.int
	switch C.tessel_eval_bool(m.x.c, m.m, a, &v) {
	case 1:
		return false, fmt.Errorf("smt: cannot evaluate %s", m.x.text(t.t))
	case 2:
		return false, fmt.Errorf("smt: %s is not a Boolean value", m.x.text(t.t))
	}
	return v == 1, m.x.check("model_eval")
}

// Version is the version of the linked libz3, e.g. "4.8.12".
func Version() string {
	var major, minor, build, rev C.uint
	C.Z3_get_version(&major, &minor, &build, &rev)
	return strconv.Itoa(int(major)) + "." + strconv.Itoa(int(minor)) + "." + strconv.Itoa(int(build))
}
