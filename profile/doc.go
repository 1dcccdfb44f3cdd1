// Package profile measures a model's layers on the machine at hand and
// writes the model file (a layer profile, docs/formats.md) that partition
// and plan read: per layer the forward, input-gradient and weight-gradient
// times (the median of repeated runs after warm-up, with their spread),
// the activation a micro-batch keeps for its backward, its checkpoint, the
// parameters and the optimizer's state, and the bytes that cross to the
// next layer; beside them, how they were measured (device, dtype, torch
// version, clock, runs).
//
// The model is either the built-in decoder-only transformer of a small
// Config (an embedding, decoder layers and a head, random weights), or a
// user's own: a Python file whose model() returns its layers, in pipeline
// order, and a sample input (docs/measured.md). The measuring is PyTorch's:
// Run starts the system's Python on the embedded profile.py, which prints
// its progress and writes what it measured; Run turns that into a Result,
// and Result.ModelFile into the file.
//
// The package also holds what a model file may carry of a measurement
// after the fact: Calibration, the corrections that a measured run of a
// schedule (package measure) found for the model's times — a scale of
// each pass's time, a time per transfer and a time per action of the
// runtime — which partition applies when it reads the file.
//
// It sits at the top of tessel's packages: it imports none of them.
package profile
