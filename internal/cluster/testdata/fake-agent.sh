#!/bin/sh
# Stands in for `interlink agent` in agentpid_test.go: announces itself
# as the agent does, then waits (bounded) to be stopped by the cleanup.
echo "listening on $3"
exec sleep 60
