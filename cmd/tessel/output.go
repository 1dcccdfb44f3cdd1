package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/outfile"
)

// outputFlags are the files a searching command can write its result to.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the schedule to a JSON `FILE` (re-check it with tessel verify; beyond 1,048,576 instances an extended schedule is written by its period: docs/formats.md#periodic-schedule-file)"},
		&cli.StringFlag{Name: "svg", Usage: "write a Gantt chart of the schedule to an SVG `FILE`"},
		&cli.StringFlag{Name: "html", Usage: "write a page with the chart and the metrics to an HTML `FILE`"},
		&cli.BoolFlag{Name: "force", Usage: "overwrite --out, --svg and --html files that exist"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON summary instead of text"},
	}
}

// outputsFrom reads outputFlags but --json.
func outputsFrom(c *cli.Context) outfile.Schedule {
	return outfile.Schedule{Out: c.String("out"), SVG: c.String("svg"), HTML: c.String("html"), Force: c.Bool("force")}
}
