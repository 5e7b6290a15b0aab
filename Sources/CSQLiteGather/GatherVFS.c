// SQLite writes each WAL frame as two writes (its 24-byte header, then the
// page), so a commit of N pages costs 2N pwrite(2) calls. This VFS forwards
// everything to the default VFS but, for WAL files only, copies contiguous
// writes into a buffer and writes the buffer at once: when the commit frame's
// page is written (its header's "database size" field is non-zero), before any
// other operation on the file, when a write is not contiguous, and when the
// buffer is full. The commit's frames thus reach the operating system before
// SQLite's commit returns, as they did with one write each: nothing changes
// for what kvod promises (docs/DURABILITY.md).
#include "CSQLiteGather.h"
#include <sqlite3.h>
#include <string.h>
#include <pthread.h>

#define GATHER_LIMIT (1 << 20)   // bytes held at most; a larger commit is written in pieces

typedef struct GatherFile {
    sqlite3_file base;
    sqlite3_file *real;          // the default VFS's file, allocated right after this struct
    int isWal;
    int commitPending;           // the last write was a commit frame's header
    unsigned char *buffer;
    int used, capacity;
    sqlite3_int64 offset;        // where buffer[0] goes
} GatherFile;

static sqlite3_vfs gatherVfs;
static sqlite3_vfs *rootVfs;

// The default VFS writes at most 0x1ffff bytes at a time (it masks the length
// with that, so a larger write fails as SQLITE_FULL): a piece of 31 pages.
#define GATHER_PIECE (31 * 4096)

static int gatherFlush(GatherFile *file) {
    int used = file->used;
    file->used = 0;
    file->commitPending = 0;
    for (int done = 0; done < used; done += GATHER_PIECE) {
        int piece = used - done < GATHER_PIECE ? used - done : GATHER_PIECE;
        int rc = file->real->pMethods->xWrite(file->real, file->buffer + done, piece, file->offset + done);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int gatherClose(sqlite3_file *f) {
    GatherFile *file = (GatherFile *)f;
    int rc = gatherFlush(file);
    int closed = file->real->pMethods->xClose(file->real);
    sqlite3_free(file->buffer);
    file->buffer = 0;
    return rc != SQLITE_OK ? rc : closed;
}

static int gatherRead(sqlite3_file *f, void *data, int amount, sqlite3_int64 offset) {
    GatherFile *file = (GatherFile *)f;
    int rc = gatherFlush(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

static int gatherWrite(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset) {
    GatherFile *file = (GatherFile *)f;
    if (!file->isWal) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    int rc;
    if (file->used > 0 && (offset != file->offset + file->used || file->used + amount > GATHER_LIMIT)) {
        if ((rc = gatherFlush(file)) != SQLITE_OK) return rc;
    }
    if (amount > GATHER_LIMIT) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    if (file->used + amount > file->capacity) {
        int capacity = file->capacity ? file->capacity : 65536;
        while (capacity < file->used + amount) capacity *= 2;
        unsigned char *grown = sqlite3_realloc(file->buffer, capacity);
        if (!grown) {
            if ((rc = gatherFlush(file)) != SQLITE_OK) return rc;
            return file->real->pMethods->xWrite(file->real, data, amount, offset);
        }
        file->buffer = grown;
        file->capacity = capacity;
    }
    if (file->used == 0) file->offset = offset;
    memcpy(file->buffer + file->used, data, amount);
    file->used += amount;
    if (file->commitPending) return gatherFlush(file);
    // A frame header (24 bytes) whose bytes 4-7, the database size after a
    // commit, are not zero: the next write, its page, ends the commit.
    const unsigned char *bytes = data;
    if (amount == 24 && (bytes[4] | bytes[5] | bytes[6] | bytes[7])) file->commitPending = 1;
    return SQLITE_OK;
}

// Every other method writes what is held first, then forwards.
#define FLUSHED(file) do { int flushRC = gatherFlush(file); if (flushRC != SQLITE_OK) return flushRC; } while (0)

static int gatherTruncate(sqlite3_file *f, sqlite3_int64 size) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xTruncate(file->real, size);
}
static int gatherSync(sqlite3_file *f, int flags) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xSync(file->real, flags);
}
static int gatherFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xFileSize(file->real, size);
}
static int gatherLock(sqlite3_file *f, int level) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xLock(file->real, level);
}
static int gatherUnlock(sqlite3_file *f, int level) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xUnlock(file->real, level);
}
static int gatherCheckReservedLock(sqlite3_file *f, int *out) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xCheckReservedLock(file->real, out);
}
static int gatherFileControl(sqlite3_file *f, int op, void *arg) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xFileControl(file->real, op, arg);
}
static int gatherSectorSize(sqlite3_file *f) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xSectorSize(file->real);
}
static int gatherDeviceCharacteristics(sqlite3_file *f) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}
static int gatherShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xShmMap(file->real, page, size, extend, out);
}
static int gatherShmLock(sqlite3_file *f, int offset, int n, int flags) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xShmLock(file->real, offset, n, flags);
}
static void gatherShmBarrier(sqlite3_file *f) {
    GatherFile *file = (GatherFile *)f;
    file->real->pMethods->xShmBarrier(file->real);
}
static int gatherShmUnmap(sqlite3_file *f, int deleteFlag) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}
static int gatherFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    GatherFile *file = (GatherFile *)f; FLUSHED(file);
    return file->real->pMethods->xFetch(file->real, offset, amount, out);
}
static int gatherUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    GatherFile *file = (GatherFile *)f;
    return file->real->pMethods->xUnfetch(file->real, offset, page);
}

static const sqlite3_io_methods gatherMethods = {
    3, gatherClose, gatherRead, gatherWrite, gatherTruncate, gatherSync, gatherFileSize,
    gatherLock, gatherUnlock, gatherCheckReservedLock, gatherFileControl, gatherSectorSize,
    gatherDeviceCharacteristics, gatherShmMap, gatherShmLock, gatherShmBarrier, gatherShmUnmap,
    gatherFetch, gatherUnfetch,
};

static int gatherOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    GatherFile *file = (GatherFile *)f;
    memset(file, 0, sizeof(*file));
    file->real = (sqlite3_file *)&file[1];
    int rc = rootVfs->xOpen(rootVfs, name, file->real, flags, outFlags);
    // No methods: SQLite calls no xClose on a file that failed to open.
    if (file->real->pMethods == 0) return rc;
    // The default VFS's files implement version 3; a lower one would lack what we forward.
    if (file->real->pMethods->iVersion < 3) {
        file->real->pMethods->xClose(file->real);
        return SQLITE_CANTOPEN;
    }
    file->isWal = (flags & SQLITE_OPEN_WAL) != 0;
    file->base.pMethods = &gatherMethods;
    return rc;
}

// The VFS's own methods are the default VFS's, called with it.
static int gatherDelete(sqlite3_vfs *v, const char *name, int sync) { (void)v; return rootVfs->xDelete(rootVfs, name, sync); }
static int gatherAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return rootVfs->xAccess(rootVfs, name, flags, out); }
static int gatherFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return rootVfs->xFullPathname(rootVfs, name, n, out); }
static void *gatherDlOpen(sqlite3_vfs *v, const char *name) { (void)v; return rootVfs->xDlOpen(rootVfs, name); }
static void gatherDlError(sqlite3_vfs *v, int n, char *out) { (void)v; rootVfs->xDlError(rootVfs, n, out); }
static void (*gatherDlSym(sqlite3_vfs *v, void *h, const char *sym))(void) { (void)v; return rootVfs->xDlSym(rootVfs, h, sym); }
static void gatherDlClose(sqlite3_vfs *v, void *h) { (void)v; rootVfs->xDlClose(rootVfs, h); }
static int gatherRandomness(sqlite3_vfs *v, int n, char *out) { (void)v; return rootVfs->xRandomness(rootVfs, n, out); }
static int gatherSleep(sqlite3_vfs *v, int us) { (void)v; return rootVfs->xSleep(rootVfs, us); }
static int gatherCurrentTime(sqlite3_vfs *v, double *out) { (void)v; return rootVfs->xCurrentTime(rootVfs, out); }
static int gatherGetLastError(sqlite3_vfs *v, int n, char *out) { (void)v; return rootVfs->xGetLastError(rootVfs, n, out); }
static int gatherCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return rootVfs->xCurrentTimeInt64(rootVfs, out); }

static const char *registeredName;

static void gatherRegister(void) {
    rootVfs = sqlite3_vfs_find(0);
    if (!rootVfs || rootVfs->iVersion < 2 || !rootVfs->xCurrentTimeInt64) return;
    gatherVfs.iVersion = 2;
    gatherVfs.szOsFile = (int)sizeof(GatherFile) + rootVfs->szOsFile;
    gatherVfs.mxPathname = rootVfs->mxPathname;
    gatherVfs.zName = "kvod-gather";
    gatherVfs.xOpen = gatherOpen;
    gatherVfs.xDelete = gatherDelete;
    gatherVfs.xAccess = gatherAccess;
    gatherVfs.xFullPathname = gatherFullPathname;
    gatherVfs.xDlOpen = gatherDlOpen;
    gatherVfs.xDlError = gatherDlError;
    gatherVfs.xDlSym = gatherDlSym;
    gatherVfs.xDlClose = gatherDlClose;
    gatherVfs.xRandomness = gatherRandomness;
    gatherVfs.xSleep = gatherSleep;
    gatherVfs.xCurrentTime = gatherCurrentTime;
    gatherVfs.xGetLastError = gatherGetLastError;
    gatherVfs.xCurrentTimeInt64 = gatherCurrentTimeInt64;
    if (sqlite3_vfs_register(&gatherVfs, 0) == SQLITE_OK) registeredName = gatherVfs.zName;
}

const char *kvod_gather_vfs_name(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, gatherRegister);
    return registeredName;
}

int kvod_gather_flush(void *db) {
    sqlite3_file *f = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK || !f) return SQLITE_OK;
    if (f->pMethods != &gatherMethods) return SQLITE_OK;
    return gatherFlush((GatherFile *)f);
}
