#!/bin/sh
# Stands in for an `interlink agent` that does not end on TERM (stuck, or
# slow to end on a loaded node) in agentkill_linux_test.go: TERM is
# ignored, and stays ignored across the exec, so only KILL ends it.
trap '' TERM
echo "listening on $3"
exec sleep 60
