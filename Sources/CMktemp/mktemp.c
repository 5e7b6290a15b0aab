// kvod's own mktemp(3), linked into kvod and kvoctl in place of glibc's, whose
// link-time notice ("the use of `mktemp' is dangerous") every static build
// printed. The caller is Foundation's atomic file write (FoundationEssentials,
// Data+Writing.swift, createTemporaryFile), which names a temporary file with
// mktemp and then creates it with O_CREAT | O_EXCL, trying another name on
// EEXIST: the race the notice warns of cannot happen there.
//
// glibc's contract: the template's last six characters, which must be
// "XXXXXX", become letters and digits that name no existing file; on failure
// the template becomes "" and errno says why. The template is returned.
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>

char *mktemp(char *template) {
    static const char characters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    int saved = errno;
    size_t length = strlen(template);
    if (length < 6 || strcmp(template + length - 6, "XXXXXX") != 0) {
        template[0] = '\0';
        errno = EINVAL;
        return template;
    }
    char *suffix = template + length - 6;
    // 62^6 names: an existing one is drawn again only when the directory is crowded.
    for (int attempt = 0; attempt < 1000; attempt++) {
        unsigned char random[6];
        ssize_t got;
        do { got = getrandom(random, sizeof random, 0); } while (got < 0 && errno == EINTR);
        if (got != (ssize_t)sizeof random) {
            template[0] = '\0';
            if (got >= 0) errno = EIO;
            return template;
        }
        for (int i = 0; i < 6; i++) suffix[i] = characters[random[i] % (sizeof characters - 1)];
        struct stat status;
        if (lstat(template, &status) != 0) {
            if (errno != ENOENT) {
                template[0] = '\0';
                return template;
            }
            errno = saved;
            return template;
        }
    }
    template[0] = '\0';
    errno = EEXIST;
    return template;
}
