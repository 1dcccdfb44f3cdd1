package main

import (
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// The report helpers every command shares (package textfmt).
var (
	secs      = textfmt.Secs
	printJSON = textfmt.JSON
)

func ptr[T any](v T) *T { return &v }
