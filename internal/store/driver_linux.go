package store

// The pure-Go SQLite (modernc.org/sqlite) is built for Linux here; it does
// not support every system interlink builds for (Solaris, AIX).
import _ "modernc.org/sqlite"

const haveDriver = true
