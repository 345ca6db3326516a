package suites

// TargetFlags are the ways a user names targets on the command line.
type TargetFlags struct {
	Stdio, URL, Manifest, Mutant string
}

// Targets resolves the flags to the targets of a run: one named target, or
// the built-in reference server (with the mutant, if any).
func (f TargetFlags) Targets() ([]*Manifest, error) {
	var (
		m   *Manifest
		err error
	)
	switch {
	case f.Manifest != "":
		m, err = LoadManifest(f.Manifest)
	case f.Stdio != "":
		m, err = StdioManifest(f.Stdio)
	case f.URL != "":
		m, err = URLManifest(f.URL)
	default:
		return ReferenceTargets(f.Mutant), nil
	}
	if err != nil {
		return nil, err
	}
	return []*Manifest{m}, nil
}
