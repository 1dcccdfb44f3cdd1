// Package atomicfile writes every file tessel writes: whole or not at all.
// A file is written to a temporary file in its own directory, synced, and
// only then renamed over its name (or linked to it, where it must not
// exist yet), so that a failure, a full disk or a kill at any moment
// leaves the old file, or no file, never a partial one. A rename replaces
// a symbolic link rather than writing where it points.
//
// Files of one bundle (tessel gen's programs and workers, compare's
// schedules) are all written to temporary files first and renamed only
// once every one of them is complete; into a directory that does not
// exist yet, the whole directory is renamed into place at once.
//
// A kill leaves at most a temporary file, named ".NAME.tmp-…" beside NAME.
package atomicfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ExistError is the error of a write without Replace over a name that
// exists; errors.Is(err, fs.ErrExist) holds.
type ExistError struct{ Path string }

func (e *ExistError) Error() string        { return e.Path + " exists" }
func (e *ExistError) Is(target error) bool { return target == fs.ErrExist }

// Options say how a file is written.
type Options struct {
	// Perm is the new file's permissions before the umask (0: 0644).
	Perm fs.FileMode
	// Replace lets the write replace a file that exists (tessel's
	// --force); without it a name that exists is an error wrapping
	// *ExistError, and nothing is written.
	Replace bool
}

func (o Options) perm() fs.FileMode {
	if o.Perm == 0 {
		return 0o644
	}
	return o.Perm
}

// Write writes what write writes to path, atomically (see the package
// doc). The error names the path.
func Write(path string, opt Options, write func(io.Writer) error) error {
	tmp, err := create(filepath.Dir(path), filepath.Base(path), opt.perm())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := fill(tmp, write); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := commit(tmp.Name(), path, opt.Replace); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte, opt Options) error {
	return Write(path, opt, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// create makes a new temporary file in dir for name, with perm (before
// the umask, as any new file).
func create(dir, name string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "."+name+".tmp-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the temporary name means nothing to the user
			}
			return nil, err
		}
		return f, nil
	}
	return nil, errors.New("no free temporary name")
}

// fill writes what write writes to f through a buffer, syncs and closes
// it.
func fill(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<16)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}

// commit puts the complete temporary file tmp at path: a rename where it
// may replace a file, a hard link where path must not exist (the link
// fails if it does, even between a check and the write), then tmp is
// removed.
func commit(tmp, path string, replace bool) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	if replace {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("%s: %w", path, unwrap(err))
		}
		return nil
	}
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		return os.Remove(tmp)
	case errors.Is(err, fs.ErrExist):
		return &ExistError{path}
	}
	// A file system without hard links: check, then rename.
	if _, err := os.Lstat(path); err == nil {
		return &ExistError{path}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, unwrap(err))
	}
	return nil
}

// syncDir makes a rename in dir durable. File systems that cannot sync a
// directory are let be.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	d.Sync()
	return nil
}

func unwrap(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// File is one file of a bundle.
type File struct {
	Name string // a plain name, no directory
	Data []byte
	Perm fs.FileMode // 0: 0644
}

// WriteFiles writes files into dir, all or nothing. Where dir does not
// exist, they are written into a temporary directory beside it, which is
// renamed to dir once complete (its parents are made as needed). Where
// it exists, every file is first written to a temporary file in dir, and
// renamed over its name only once all are complete; without
// opt.Replace, a name that exists is refused before anything is written.
// opt.Perm applies to files without their own.
func WriteFiles(dir string, files []File, opt Options) error {
	for _, f := range files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." {
			return fmt.Errorf("%s: bad file name %q", dir, f.Name)
		}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeNewDir(dir, files, opt)
	case err != nil:
		return fmt.Errorf("%s: %w", dir, unwrap(err))
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if fi, err := os.Lstat(path); err == nil {
			if fi.IsDir() {
				return fmt.Errorf("%s: is a directory", path)
			}
			if !opt.Replace {
				return &ExistError{path}
			}
		}
	}
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, t := range tmps {
			os.Remove(t) // those not renamed: after a failure
		}
	}()
	for _, f := range files {
		o := opt
		if f.Perm != 0 {
			o.Perm = f.Perm
		}
		tmp, err := create(dir, f.Name, o.perm())
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, f.Name), err)
		}
		tmps = append(tmps, tmp.Name())
		if err := fill(tmp, func(w io.Writer) error { _, err := w.Write(f.Data); return err }); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, f.Name), err)
		}
	}
	for k, f := range files {
		if err := commit(tmps[k], filepath.Join(dir, f.Name), opt.Replace); err != nil {
			return err
		}
		tmps[k] = "" // renamed (Remove("") fails harmlessly)
	}
	return syncDir(dir)
}

// writeNewDir writes files into a new directory beside dir and renames
// it to dir.
func writeNewDir(dir string, files []File, opt Options) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%s: %w", dir, unwrap(err))
	}
	var tmp string
	for range 100 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		tmp = filepath.Join(parent, "."+filepath.Base(filepath.Clean(dir))+".tmp-"+hex.EncodeToString(b[:]))
		err := os.Mkdir(tmp, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", dir, unwrap(err))
		}
		tmp = ""
	}
	if tmp == "" {
		return fmt.Errorf("%s: no free temporary name", dir)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	for _, f := range files {
		o := Options{Perm: opt.Perm}
		if f.Perm != 0 {
			o.Perm = f.Perm
		}
		path := filepath.Join(tmp, f.Name)
		t, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, o.perm())
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, f.Name), unwrap(err))
		}
		if err := fill(t, func(w io.Writer) error { _, err := w.Write(f.Data); return err }); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, f.Name), err)
		}
	}
	syncDir(tmp)
	// Renaming onto a directory that appeared meanwhile fails unless it
	// is empty: nothing of it is lost.
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("%s: %w", dir, unwrap(err))
	}
	done = true
	return syncDir(parent)
}

// Check says, before any long work, whether path can be written: its
// directory exists and takes new files, path is no directory, and, unless
// replace, no file of that name exists (an *ExistError). A
// probe file is made and removed in the directory, the one test that
// holds on every file system.
func Check(path string, replace bool) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s: is a directory", path)
		}
		if !replace {
			return &ExistError{path}
		}
	}
	return probe(filepath.Dir(path), path)
}

// CheckDir says whether files can be written into dir by WriteFiles: an
// existing directory that takes new files (and is empty, unless
// nonEmpty), or a name that does not exist whose nearest existing parent
// is a directory that takes new files.
func CheckDir(dir string, nonEmpty bool) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		if !nonEmpty {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return fmt.Errorf("%s: %w", dir, unwrap(err))
			}
			if len(entries) > 0 {
				return fmt.Errorf("%s: %w", dir, errNotEmpty)
			}
		}
		return probe(dir, dir)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", dir, unwrap(err))
	}
	for p := filepath.Dir(filepath.Clean(dir)); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s: %s is not a directory", dir, p)
			}
			return probe(p, dir)
		}
		if !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
			return fmt.Errorf("%s: %w", dir, unwrap(err))
		}
	}
}

// errNotEmpty is CheckDir's error for a directory that has files in it.
var errNotEmpty = errors.New("directory not empty")

// IsNotEmpty reports whether err is CheckDir's refusal of a directory
// with files in it.
func IsNotEmpty(err error) bool { return errors.Is(err, errNotEmpty) }

// probe makes and removes a file in dir; the error names what (the path
// asked about).
func probe(dir, what string) error {
	f, err := create(dir, "probe", 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
