package verify

import (
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/schedule"
)

// Load reads the schedule file at path and verifies it (Schedule). A file
// that cannot be read, and a schedule that fails verification, are bad
// input (package inputerr): the file is the user's, not the work's.
func Load(path string) (*schedule.Schedule, error) {
	s, err := schedule.Load(path)
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	if err := Schedule(s); err != nil {
		return nil, inputerr.Errorf("%s: invalid schedule (see tessel verify): %v", path, err)
	}
	return s, nil
}
