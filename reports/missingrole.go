package reports

import "fmt"

// missingRoleFormat is the reason of a check the harness skips because the
// target manifest does not declare a role it needs.
const missingRoleFormat = "the target manifest declares no %q role"

// MissingRoleReason is the SKIP reason of a check that needs role and whose
// target manifest does not declare it. The harness words its skip with it,
// so that MissingRoleOf can tell these SKIPs from the others.
func MissingRoleReason(role string) string { return fmt.Sprintf(missingRoleFormat, role) }

// MissingRoleOf returns the role whose absence made c SKIP, or "" when c is
// not such a SKIP: c.MissingRole when set, else the role read back from a
// reason worded by MissingRoleReason (exactly; a longer reason that quotes
// it is another SKIP).
func MissingRoleOf(c Check) string {
	if c.Status != Skip {
		return ""
	}
	if c.MissingRole != "" {
		return c.MissingRole
	}
	var role string
	if n, err := fmt.Sscanf(c.Reason, missingRoleFormat, &role); err == nil && n == 1 && MissingRoleReason(role) == c.Reason {
		return role
	}
	return ""
}
