// Nothing to call: a target that depends on CMktemp links kvod's own mktemp(3) in, in place
// of glibc's (mktemp.c says why).
