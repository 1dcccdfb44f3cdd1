// Package measure holds a schedule's prediction against the clock: it
// reads the traces that the workers of tessel gen write (every op's start
// and end on every rank, per iteration after the warm-up), predicts the
// same programs with the model file's costs (each block its layers' profiled
// times, every transfer and every action of the runtime their calibrated
// times), and reports the measured iteration time, each device's idle
// time and the bubble rate beside the prediction, the actions that differ
// most, and which term of the model is off: a pass's time, a transfer's,
// or the runtime's overhead per action. Fit turns the differences into a
// profile.Calibration that the model file carries, so that the next plan
// predicts better; Perfetto writes the measured and the predicted
// timelines side by side.
//
// Experiment runs the whole loop on this machine's CPU: profile the
// decoder, plan it, run 1F1B, GPipe, ZB-H1 and tessel's schedule with the
// generated workers, measure, calibrate, and predict again
// (docs/measured.md).
package measure
