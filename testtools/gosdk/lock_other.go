//go:build !unix && !windows

package gosdk

import (
	"errors"
	"os"
)

var errNoLock = errors.New("FileStore needs a file lock (flock or LockFileEx), which this system lacks: implement Store on your own storage")

func tryLock(*os.File) (bool, error) { return false, errNoLock }

func unlock(*os.File) error { return errNoLock }

func syncDir(string) error { return nil }
