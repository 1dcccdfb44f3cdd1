package main

import (
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// The report helpers every command shares (package textfmt).
var (
	round6    = textfmt.Round6
	secs      = textfmt.Secs
	printJSON = textfmt.JSON
	pct       = textfmt.Pct
	ints      = textfmt.Ints
	yesNo     = textfmt.YesNo
)

func ptr[T any](v T) *T { return &v }
