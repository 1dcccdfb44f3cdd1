package main

import (
	"bytes"
	"context"
	"testing"
)

// TestCompareSweepCLI checks the flag wiring through the real app.
func TestCompareSweepCLI(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"tessel", "compare", "--format", "xml"}, 2, ""},
		{[]string{"tessel", "compare", "extra"}, 2, ""},
		{[]string{"tessel", "sweep", "--nr", "0-2"}, 2, ""},
		{[]string{"tessel", "sweep", "--placement", "v-shape", "--nr", "1-2", "--memory", "2", "--format", "csv"}, 0,
			"figure,placement,nr,memory,bubble_rate,period,repetend_nr,proven\n11,v-shape,1,0,0.750000,16,1,true\n11,v-shape,2,0,0.500000,8,2,true\n12,v-shape,2,2,0.500000,8,2,true\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || (c.out != "" && stdout.String() != c.out) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stdout %q", c.args, code, stdout.String(), stderr.String(), c.code, c.out)
		}
	}
}
