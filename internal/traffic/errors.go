package traffic

import "fmt"

func errorf(format string, a ...any) error { return fmt.Errorf("traffic: "+format, a...) }
