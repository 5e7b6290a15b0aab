#ifndef KVOD_CSQLITE_GATHER_H
#define KVOD_CSQLITE_GATHER_H
// A SQLite VFS over the default one that gathers the writes of one commit to
// a WAL file into one write(2) (docs/DURABILITY.md, "On disk").
// (No sqlite3.h here: CSQLite already brings it into Swift; db is an sqlite3 *.)

/// Registers the gathering VFS (once; later calls return the same name) and
/// returns its name for sqlite3_open_v2, or NULL if it could not be made.
const char *kvod_gather_vfs_name(void);

/// Writes what the connection's WAL holds back, if anything: SQLITE_OK, or
/// the error of the write. A commit's frames are written when its commit
/// frame is; this is for the end of every commit all the same.
int kvod_gather_flush(void *db);

#endif
