// Package runtimegen turns a verified schedule into what devices run
// (the paper's §IV-D): one program per device, a list of typed operations
// (compute, collective, send, recv, wait) in which every tensor that
// crosses devices is sent and received in an order that cannot deadlock.
// It simulates a set of programs event by event (makespan, idle time,
// deadlocks), and writes PyTorch workers that execute them on
// torch.distributed.
//
// It takes schedules, not solvers: of tessel's packages it imports
// placement and schedule only (and the report helpers, and profile for the
// built-in decoder the workers may run: Decoder, DecoderFiles), and it
// starts no process; it reads and writes program directories
// (LoadPrograms, WriteFiles) and reports simulations of a schedule's
// program sets (SimulateAll, Report).
//
// # The order
//
// Instances are put in one global order: by start time, then first
// device (GlobalOrder). Every dependency B_i → B_j whose consumer runs on a
// device that did not run the producer is a transfer of tensor
// "B_i->B_j@n" (TensorName) from the producer's device (the first of its
// group) to that device, placed right after the producer in the global
// order. Each device's program is the part of the global order that
// involves it; a block on a device group is a collective that every member
// runs at the same place.
//
// Blocking programs (Fig. 7a) send and receive inline. They cannot
// deadlock: take the first event of the global order that never
// completes. Every event before it completed, so every device it involves
// has nothing left before it and has reached it: a compute runs, a
// collective has all its members, and a transfer has both its sender and
// its receiver — so it completes, a contradiction. Every pair of devices
// thus issues its sends and receives in the same order, and since a
// producer starts before its consumer, a transfer precedes its consumer.
//
// Non-blocking programs (Fig. 7b) post each send right after its producer
// and each receive early (before the first block of the receiving device
// that is scheduled to end after the producer starts), wait for a received
// tensor right before its consumer, and wait for their sends at the end.
// Only waits and collectives block. Take a blocked op whose instance comes
// first in the global order: a wait for a received tensor is released by
// the send, which its device posted right after the producer, an earlier
// instance, so before whatever that device is blocked at; a collective
// has all its members, since none can be past it and each is blocked no
// earlier. Either way it completes: no deadlock.
//
// The text and JSON forms of operations round-trip (Op.String, ParseOp,
// Program.Marshal, ParseProgram); the simulator and the workers read the
// same programs.
package runtimegen
