#ifndef KVOD_CSQLITE_SHIM_H
#define KVOD_CSQLITE_SHIM_H
// The one place kvod includes SQLite (Debian's libsqlite3-dev), as GRDB's
// GRDBSQLite target does. Static inline helpers go here for what Swift cannot
// import from sqlite3.h.
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
/// cannot import: "copy the bytes before returning from the bind call".
static inline sqlite3_destructor_type kvod_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_db_config is variadic, which Swift cannot call: closing this
/// connection leaves the WAL as it is instead of copying it into the database.
static inline int kvod_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/// sqlite3_config is variadic too: no memory-use statistics, whose global
/// mutex every allocation takes. Only before SQLite initializes (the first
/// open); later it returns SQLITE_MISUSE and changes nothing.
static inline int kvod_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
