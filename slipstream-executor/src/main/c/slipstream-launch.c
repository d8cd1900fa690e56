/*
 * slipstream-launch: an instance's supervisor, in one process image instead of a chain of shells and util-linux
 * commands. It does exactly what Supervisor.SCRIPT does (setsid sh, then setsid, nsenter, unshare, setpriv and an init
 * shell), with the same arguments, the same files and the same exit codes; what an exec of each of those costs is what
 * it saves (docs/benchmarks.md). Built where the build machine has a C compiler; the shell chain is the fallback.
 *
 *   slipstream-launch CONTROL_DIR WORKING_DIR UID GROUP_OPTION MAX_PROCESSES NETNS SANDBOX_ARGS OOM_SCORE_ADJ CGROUP_PROCS
 *       DEVICE_COVER COMMAND...
 *   slipstream-launch --serve
 *
 * UID, NETNS, SANDBOX_ARGS, OOM_SCORE_ADJ, CGROUP_PROCS and DEVICE_COVER may be empty (none); GROUP_OPTION is
 * --clear-groups or --groups=GID. DEVICE_COVER (DeviceCover.java) is a file and the GPU nodes to bind it over in a
 * mount namespace of the instance's own, colon separated: only with a uid and without an image.
 *
 * The processes (the shell chain's, less unshare's waiter between the supervisor and the init):
 *   supervisor (as the server, a session of its own): with a uid, makes the PID namespace its child will be the init
 *       of; writes CONTROL_DIR/pid ("supervisor child", and " init" when the child is the namespace's init), says
 *       "started" on its stdout (the server's pipe), waits for the child, writes exit_code (128 + signal when killed).
 *   child (a session of its own, the network entered, the logs as stdio): with a uid, the init below; with an image,
 *       bubblewrap as the uid; without a uid, the command.
 *   init (PID 1 of the namespace, as the uid, no new privileges, killed with the supervisor): takes on the environment
 *       file and the working directory as the uid, starts the command, reaps everything, exits with the command's
 *       exit code; it has no signal handlers, so nothing in the namespace can signal it.
 * The environment file is the one the shell sources: lines of export NAME='value', quotes escaped as '\''.
 *
 * With --serve it is the server's launch helper (LaunchHelper.java), as slurmd is Slurm's: it lives as long as the
 * server and forks a supervisor for each request on its stdin, so that a start costs no exec of this binary and the
 * server no process of its own to spawn and wait for. Requests: "LENGTH\n" and then LENGTH bytes of NUL-terminated
 * strings: an id (digits), the supervisor's log (its stderr), then the arguments above, the first of which, the
 * control directory, is also the supervisor's working directory. Replies on stdout, one line each, in this order for an id: "forked ID PID" (or
 * "failed ID" when no process could be made), then "started ID" or "unstarted ID" (what the supervisor said on its pipe),
 * then "exit PID" once the supervisor is reaped. It exits when its stdin ends; the supervisors it forked live on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ENV_BYTES (16 << 20)
#define MAX_ENV_ENTRIES 16384

/* Used before anything else: the launcher's own environment (PATH), as the supervisor's shell has it. */
static const char *const DEFAULT_PATH = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

static void fail(int code, const char *what, const char *detail) {
    if (detail != NULL && errno != 0) {
        dprintf(2, "slipstream-launch: %s %s: %s\n", what, detail, strerror(errno));
    } else if (detail != NULL) {
        dprintf(2, "slipstream-launch: %s %s\n", what, detail);
    } else {
        dprintf(2, "slipstream-launch: %s: %s\n", what, strerror(errno));
    }
    _exit(code);
}

static long parse_number(const char *text, const char *name) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0) {
        errno = 0;
        fail(2, name, "is not a number");
    }
    return value;
}

static void write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            return;
        }
        text += written;
        length -= (size_t) written;
    }
}

/* One short write of a whole line (readers take a line only once its newline is there), never through a link. */
static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        return -1;
    }
    write_all(fd, text, strlen(text));
    return close(fd);
}

/* One write to a kernel file (/proc, a cgroup's), that must take whole: -1 (errno set) if it did not. */
static int write_control(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t written = write(fd, text, strlen(text));
    int error = errno;
    close(fd);
    errno = error;
    return written == (ssize_t) strlen(text) ? 0 : -1;
}

/* The instance's first process, as root, before anything else: its OOM score ("" keeps the supervisor's; one root sets
 * is the least its uid may set), then its cgroup, joined by writing 0 (itself) to each cgroup.procs of the colon
 * separated list: everything it starts from here on is inside. */
static void enter_cgroup(const char *oom_score_adj, const char *cgroup_procs) {
    if (oom_score_adj[0] != '\0' && write_control("/proc/self/oom_score_adj", oom_score_adj) != 0) {
        fail(2, "cannot set", "/proc/self/oom_score_adj");
    }
    char *list = strdup(cgroup_procs);
    if (list == NULL) {
        fail(2, "out of memory", NULL);
    }
    char *rest = list;
    for (char *procs = strsep(&rest, ":"); procs != NULL; procs = strsep(&rest, ":")) {
        if (procs[0] != '\0' && write_control(procs, "0") != 0) {
            fail(2, "cannot join the instance's cgroup:", procs);
        }
    }
    free(list);
}

static void open_as(int target, const char *path, int flags) {
    int fd = open(path, flags | O_NOFOLLOW, 0666);
    if (fd < 0) {
        fail(2, "cannot open", path);
    }
    if (fd != target) {
        if (dup2(fd, target) < 0) {
            fail(2, "cannot use", path);
        }
        close(fd);
    }
}

/* Reads a whole file of the environment's format; adds its variables to env (replacing those of the same name). */
static char **read_environment(const char *path) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        fail(2, "cannot read the environment", path);
    }
    size_t capacity = 4096, length = 0;
    char *text = malloc(capacity + 1);
    for (;;) {
        if (text == NULL) {
            fail(2, "out of memory reading", path);
        }
        if (length == capacity) {
            if (capacity >= MAX_ENV_BYTES) {
                errno = 0;
                fail(2, "the environment is too large:", path);
            }
            capacity *= 2;
            text = realloc(text, capacity + 1);
            continue;
        }
        ssize_t got = read(fd, text + length, capacity - length);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            fail(2, "cannot read the environment", path);
        }
        if (got == 0) {
            break;
        }
        length += (size_t) got;
    }
    close(fd);
    text[length] = '\0';

    char **env = calloc(MAX_ENV_ENTRIES + 2, sizeof(char *));
    if (env == NULL) {
        fail(2, "out of memory reading", path);
    }
    size_t count = 0;
    env[count++] = (char *) DEFAULT_PATH;
    /* Decoded in place: a value never grows ('\'' becomes '). */
    char *in = text;
    while (*in != '\0') {
        errno = 0;
        if (strncmp(in, "export ", 7) != 0) {
            fail(2, "a line of the environment file does not start with export:", path);
        }
        in += 7;
        char *entry = in, *out = in;
        while (*in == '_' || (*in >= 'A' && *in <= 'Z') || (*in >= 'a' && *in <= 'z') || (in > entry && *in >= '0' && *in <= '9')) {
            *out++ = *in++;
        }
        if (out == entry || in[0] != '=' || in[1] != '\'') {
            fail(2, "a line of the environment file is not NAME='value':", path);
        }
        size_t name_length = (size_t) (out - entry);
        *out++ = '=';
        in += 2;
        for (;;) {
            if (*in == '\0') {
                fail(2, "an unterminated value in the environment file", path);
            }
            if (*in != '\'') {
                *out++ = *in++;
            } else if (strncmp(in, "'\\''", 4) == 0) {
                *out++ = '\'';
                in += 4;
            } else if (in[1] == '\n') {
                in += 2;
                break;
            } else {
                fail(2, "a value of the environment file is not quoted as expected:", path);
            }
        }
        *out = '\0';
        size_t i = 0;
        while (i < count && !(strncmp(env[i], entry, name_length + 1) == 0)) {
            i++;
        }
        if (i == count) {
            if (count == MAX_ENV_ENTRIES) {
                fail(2, "too many variables in the environment file", path);
            }
            count++;
        }
        env[i] = entry;
    }
    env[count] = NULL;
    return env;
}

/* As setpriv --reuid=uid --regid=uid (--groups=gid | --clear-groups) --no-new-privs --pdeathsig KILL, checked
 * afterwards: no way back to uid 0, no capability left. The parent-death signal is set here, after the switch, because
 * the kernel clears it whenever the uid changes. */
static void become(uid_t uid, const char *groups) {
    if (strcmp(groups, "--clear-groups") == 0) {
        if (setgroups(0, NULL) != 0) {
            fail(2, "setgroups", NULL);
        }
    } else if (strncmp(groups, "--groups=", 9) == 0) {
        gid_t gid = (gid_t) parse_number(groups + 9, "the group");
        if (setgroups(1, &gid) != 0) {
            fail(2, "setgroups", NULL);
        }
    } else {
        errno = 0;
        fail(2, "the group option is neither --clear-groups nor --groups=GID:", groups);
    }
    if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) {
        fail(2, "cannot switch to the run's uid", NULL);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fail(2, "cannot set no_new_privs", NULL);
    }
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, caps) != 0) {
        fail(2, "capget", NULL);
    }
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        if (caps[i].permitted != 0 || caps[i].effective != 0 || caps[i].inheritable != 0) {
            errno = 0;
            fail(2, "capabilities are left after the switch to the run's uid", "");
        }
    }
    if (setuid(0) == 0 || geteuid() != uid || getegid() != uid) {
        errno = 0;
        fail(2, "the switch to the run's uid did not hold", "");
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        fail(2, "cannot set the parent-death signal", NULL);
    }
}

/* PWD is the working directory, as the shell's cd sets it (whatever the file said). */
static void with_pwd(char **env, const char *working_dir) {
    size_t length = strlen(working_dir) + 5;
    char *pwd = malloc(length);
    if (pwd == NULL) {
        fail(2, "out of memory", NULL);
    }
    snprintf(pwd, length, "PWD=%s", working_dir);
    size_t i = 0;
    while (env[i] != NULL && strncmp(env[i], "PWD=", 4) != 0) {
        i++;
    }
    if (env[i] == NULL) {
        env[i + 1] = NULL; /* read_environment leaves room for one more */
    }
    env[i] = pwd;
}

static int exit_code_of(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/* Runs the command with the environment: PATH is the environment's, as when the shell runs it. */
static void exec_command(char **command, char **env) {
    environ = env;
    execvp(command[0], command);
    int error = errno;
    dprintf(2, "%s: %s\n", command[0], strerror(error));
    _exit(error == ENOENT || error == ENOTDIR ? 127 : 126);
}

/* PID 1 of the instance's namespace, as the run's uid. */
static void init(const char *control_dir, const char *working_dir, char **command) {
    char env_path[PATH_MAX];
    if (snprintf(env_path, sizeof env_path, "%s/env", control_dir) >= (int) sizeof env_path) {
        errno = ENAMETOOLONG;
        fail(2, "the control directory's name", control_dir);
    }
    char **env = read_environment(env_path);
    if (chdir(working_dir) != 0) {
        fail(2, "cannot enter the working directory", working_dir);
    }
    with_pwd(env, working_dir);
    /* Spawned rather than forked: the child shares this address space until its exec, so no copy of the page tables
     * is made only to be thrown away (on a paravirtualised machine, a large part of a start's cost). The search of
     * PATH is the environment's, as when the shell runs it. */
    environ = env;
    posix_spawnattr_t attributes;
    sigset_t none;
    sigemptyset(&none);
    if (posix_spawnattr_init(&attributes) != 0 || posix_spawnattr_setsigmask(&attributes, &none) != 0
            || posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK) != 0) {
        errno = 0;
        fail(2, "cannot prepare the command's start", "");
    }
    pid_t command_pid;
    int error = posix_spawnp(&command_pid, command[0], NULL, &attributes, command, env);
    if (error == ENOEXEC) {
        /* A script without #!: execvp hands it to /bin/sh, as the shell chain's exec does; posix_spawnp does not. */
        command_pid = fork();
        if (command_pid < 0) {
            fail(2, "fork", NULL);
        }
        if (command_pid == 0) {
            sigprocmask(SIG_SETMASK, &none, NULL);
            exec_command(command, env);
        }
        error = 0;
    }
    if (error == EAGAIN || error == ENOMEM) {
        /* No process could be made (the run's process limit, memory): the launcher's failure, as fork's was. */
        errno = error;
        fail(2, "cannot start the command", NULL);
    }
    if (error != 0) {
        /* As the shell reports a command it cannot run, with its exit codes. */
        dprintf(2, "%s: %s\n", command[0], strerror(error));
        _exit(error == ENOENT || error == ENOTDIR ? 127 : 126);
    }
    /* Its own messages go nowhere from here: the command keeps the instance's stderr. */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    for (;;) {
        int status;
        pid_t ended = waitpid(-1, &status, 0);
        if (ended == command_pid) {
            _exit(exit_code_of(status));
        }
        if (ended < 0 && errno != EINTR) {
            _exit(2);
        }
    }
}

/* The GPUs that are not the instance's, in a mount namespace of its own (DeviceCover.java): as root, before the uid
 * switch, the cover (the list's first path, a file only root may open) is bound over each of the others, with a /proc
 * of its PID namespace's own. */
static void cover_devices(const char *device_cover) {
    if (unshare(CLONE_NEWNS) != 0) {
        fail(2, "cannot make a mount namespace", NULL);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        fail(2, "cannot make the mounts private", NULL);
    }
    /* Its PID namespace's own /proc (as unshare --mount-proc): through the machine's, /proc/PID/root of a process of
     * its uid in another mount namespace would reach the nodes uncovered. */
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
        fail(2, "cannot mount", "/proc");
    }
    char *list = strdup(device_cover);
    if (list == NULL) {
        fail(2, "out of memory", NULL);
    }
    char *rest = list;
    const char *cover = strsep(&rest, ":");
    for (char *node = strsep(&rest, ":"); node != NULL; node = strsep(&rest, ":")) {
        if (node[0] != '\0' && mount(cover, node, NULL, MS_BIND, NULL) != 0) {
            fail(2, "cannot cover", node);
        }
    }
    free(list);
}

static int launch(int argc, char **argv) {
    if (argc < 12) {
        errno = 0;
        fail(2, "usage:", "CONTROL_DIR WORKING_DIR UID GROUP_OPTION MAX_PROCESSES NETNS SANDBOX_ARGS OOM_SCORE_ADJ CGROUP_PROCS DEVICE_COVER COMMAND...");
    }
    const char *dir = argv[1], *working_dir = argv[2], *uid_text = argv[3], *groups = argv[4], *netns = argv[6],
            *sandbox = argv[7], *oom_score_adj = argv[8], *cgroup_procs = argv[9], *device_cover = argv[10];
    char **command = argv + 11;
    int with_uid = uid_text[0] != '\0';
    uid_t uid = with_uid ? (uid_t) parse_number(uid_text, "the uid") : 0;
    if (with_uid && uid == 0) {
        errno = 0;
        fail(2, "the run's uid may not be", "0");
    }
    long max_processes = with_uid ? parse_number(argv[5], "the process limit") : 0;
    char path[PATH_MAX];
    if (strlen(dir) > PATH_MAX - 16) {
        errno = ENAMETOOLONG;
        fail(2, "the control directory's name", dir);
    }
    /* Whatever started it: the waits below need SIGCHLD's default, and nothing but stdio goes on to the workload. */
    signal(SIGCHLD, SIG_DFL);
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 1024; fd++) {
            close(fd);
        }
    }
    if (setsid() < 0) {
        fail(2, "setsid", NULL);
    }
    umask(077);

    /* With a uid (and no image, whose bubblewrap makes its own): the PID namespace is made here, so that the child is
     * its init at once, one fork less than unshare --fork's waiter in between. The pid file says so ("init"). */
    int namespaced = with_uid && sandbox[0] == '\0';
    if (device_cover[0] != '\0' && !namespaced) {
        errno = 0;
        fail(2, "GPUs are covered only for an instance with a uid and without an image:", device_cover);
    }
    int alive[2] = {-1, -1}; /* the write end stays open while the supervisor lives */
    if (namespaced) {
        if (unshare(CLONE_NEWPID) != 0) {
            fail(2, "cannot make a PID namespace", NULL);
        }
        if (pipe2(alive, O_CLOEXEC) != 0) {
            fail(2, "pipe", NULL);
        }
    }

    /* The child closes its end once in its cgroups (or dies): only then is the instance said to be started. A server
     * stopping right after that word removes the cgroups nothing runs in, and an instance not yet in its own would
     * have found it gone (its start failed with 2). */
    int joined[2];
    if (pipe2(joined, O_CLOEXEC) != 0) {
        fail(2, "pipe", NULL);
    }
    pid_t child = fork();
    if (child < 0) {
        fail(2, "fork", NULL);
    }
    if (child == 0) {
        close(joined[0]);
        open_as(0, "/dev/null", O_RDONLY);
        snprintf(path, sizeof path, "%s/stdout.log", dir);
        open_as(1, path, O_WRONLY | O_APPEND | O_CREAT);
        snprintf(path, sizeof path, "%s/stderr.log", dir);
        open_as(2, path, O_WRONLY | O_APPEND | O_CREAT);
        enter_cgroup(oom_score_adj, cgroup_procs); /* its refusal in the instance's stderr */
        close(joined[1]);
        umask(002);
        if (with_uid) {
            struct rlimit limit = {(rlim_t) max_processes, (rlim_t) max_processes};
            if (setrlimit(RLIMIT_NPROC, &limit) != 0) {
                fail(2, "cannot limit the run's processes", NULL);
            }
        }
        if (netns[0] != '\0') {
            int ns = open(netns, O_RDONLY | O_CLOEXEC);
            if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
                fail(2, "cannot enter the run's network", netns);
            }
            close(ns);
        }
        if (setsid() < 0) {
            fail(2, "setsid", NULL);
        }
        if (sandbox[0] != '\0') {
            /* bubblewrap makes the namespaces and reads its arguments from descriptor 3. */
            open_as(3, sandbox, O_RDONLY);
            if (with_uid) {
                become(uid, groups);
            }
            char **bwrap = calloc((size_t) argc, sizeof(char *));
            if (bwrap == NULL) {
                fail(2, "out of memory", NULL);
            }
            size_t n = 0;
            bwrap[n++] = "bwrap";
            bwrap[n++] = "--args";
            bwrap[n++] = "3";
            bwrap[n++] = "--";
            for (char **arg = command; *arg != NULL; arg++) {
                bwrap[n++] = *arg;
            }
            execvp("bwrap", bwrap);
            fail(127, "cannot run", "bwrap");
        }
        if (!with_uid) {
            char env_path[PATH_MAX];
            snprintf(env_path, sizeof env_path, "%s/env", dir);
            char **env = read_environment(env_path);
            if (chdir(working_dir) != 0) {
                fail(2, "cannot enter the working directory", working_dir);
            }
            with_pwd(env, working_dir);
            exec_command(command, env);
        }
        /* PID 1 of the namespace: the init, and the namespace with it, do not outlive the supervisor (as unshare's
         * --kill-child). become() asks for the signal (after the uid switch, which clears it); a supervisor already
         * gone by then has closed its end of the pipe, which the poll sees. */
        close(alive[1]);
        if (device_cover[0] != '\0') {
            cover_devices(device_cover);
        }
        become(uid, groups);
        struct pollfd gone = {alive[0], POLLIN, 0};
        if (poll(&gone, 1, 0) != 0) {
            _exit(2);
        }
        close(alive[0]);
        init(dir, working_dir, command);
    }
    if (namespaced) {
        close(alive[0]);
    }
    close(joined[1]);
    char ignored;
    while (read(joined[0], &ignored, 1) < 0 && errno == EINTR) {
    }
    close(joined[0]);

    char line[64];
    snprintf(path, sizeof path, "%s/pid", dir);
    snprintf(line, sizeof line, namespaced ? "%ld %ld init\n" : "%ld %ld\n", (long) getpid(), (long) child);
    if (write_file(path, line) != 0) {
        /* Nobody could find the instance: it must not run. */
        int error = errno;
        kill(child, SIGKILL);
        errno = error;
        fail(2, "cannot write", path);
    }
    /* The server waits on this pipe for the pid file. A server that died meanwhile must not take the supervisor with
     * it: SIGPIPE is ignored for this write only. */
    signal(SIGPIPE, SIG_IGN);
    write_all(1, "started\n", 8);
    signal(SIGPIPE, SIG_DFL);
    dup2(2, 1);

    int status;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            fail(2, "waitpid", NULL);
        }
    }
    snprintf(line, sizeof line, "%d\n", exit_code_of(status));
    /* Relative: the working directory is the control directory, and follows it when the data directory is moved. */
    if (write_file("exit_code", line) != 0) {
        fail(2, "cannot write", "exit_code");
    }
    return 0;
}

/* --- the launch helper (--serve) --- */

/* LaunchHelper.MAX_REQUEST_BYTES: the server refuses a larger start itself (a command's arguments are far smaller:
 * the kernel takes a few MiB), so that no job can end the helper every other run's start goes through. */
#define MAX_REQUEST_BYTES (16 << 20)

struct pending {
    pid_t pid;
    int said; /* the read end of the supervisor's stdout, -1 once its word is in */
    char id[24];
};

static struct pending *pendings;
static size_t pending_count, pending_capacity;

/* One whole line on stdout (the server's pipe): short, so one write; a server gone ends the helper. */
static void reply(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *format, ...) {
    char line[96];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(line, sizeof line, format, arguments);
    va_end(arguments);
    const char *at = line;
    while (length > 0) {
        ssize_t written = write(1, at, (size_t) length);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            _exit(0);
        }
        at += written;
        length -= (int) written;
    }
}

/* The supervisor's word: "started" before its pipe closed, or nothing (it failed; its log says why). */
static void hear(struct pending *p) {
    char word[16];
    ssize_t got;
    do {
        got = read(p->said, word, sizeof word);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && errno == EAGAIN) {
        return;
    }
    reply(got >= 7 && memcmp(word, "started", 7) == 0 ? "started %s\n" : "unstarted %s\n", p->id);
    close(p->said);
    p->said = -1;
}

/* Forks the supervisor of one request (id, log, then launch()'s arguments); its fds 0-2 are /dev/null, the pipe the
 * server hears from through this helper, and its log. */
static void fork_supervisor(char *request, size_t length) {
    if (request[length - 1] != '\0') {
        errno = 0;
        fail(2, "--serve:", "a request does not end with a NUL");
    }
    size_t count = 0;
    for (size_t i = 0; i < length; i++) {
        count += request[i] == '\0';
    }
    char **args = calloc(count + 1, sizeof(char *));
    if (args == NULL) {
        fail(2, "out of memory", NULL);
    }
    size_t n = 0;
    for (char *at = request; at < request + length; at += strlen(at) + 1) {
        args[n++] = at;
    }
    if (n < 2 + 10 || strlen(args[0]) >= sizeof pendings->id) {
        errno = 0;
        fail(2, "--serve:", "a malformed request"); /* the server's bug: it sees the helper end and starts another */
    }
    const char *id = args[0], *log = args[1], *control_dir = args[2];
    char **launch_args = args + 1; /* launch() never reads its argv[0]: the log's slot does */
    if (pending_count == pending_capacity) {
        pending_capacity = pending_capacity == 0 ? 64 : pending_capacity * 2;
        pendings = realloc(pendings, pending_capacity * sizeof *pendings);
        if (pendings == NULL) {
            fail(2, "out of memory", NULL);
        }
    }
    int said[2];
    if (pipe2(said, O_CLOEXEC) != 0) {
        reply("failed %s\n", id);
        free(args);
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(said[0]);
        close(said[1]);
        reply("failed %s\n", id);
        free(args);
        return;
    }
    if (pid == 0) {
        /* As an exec from the server would leave it: default signals, none blocked. */
        sigset_t none;
        sigemptyset(&none);
        signal(SIGPIPE, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (log_fd < 0) {
            fail(2, "cannot open the supervisor's log", log); /* into the helper's stderr: the server's log */
        }
        if (dup2(log_fd, 2) < 0 || dup2(said[1], 1) < 0) {
            _exit(2);
        }
        open_as(0, "/dev/null", O_RDONLY);
        if (chdir(control_dir) != 0) {
            fail(2, "cannot enter the control directory", control_dir);
        }
        _exit(launch((int) n - 1, launch_args));
    }
    free(args);
    close(said[1]);
    fcntl(said[0], F_SETFL, O_NONBLOCK);
    struct pending *p = &pendings[pending_count++];
    p->pid = pid;
    p->said = said[0];
    snprintf(p->id, sizeof p->id, "%s", id);
    reply("forked %s %ld\n", p->id, (long) pid);
}

/* Reaps every supervisor that ended; what one said on its pipe is told before its exit. */
static void reap(void) {
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            return;
        }
        for (size_t i = 0; i < pending_count; i++) {
            if (pendings[i].pid == pid) {
                if (pendings[i].said >= 0) {
                    hear(&pendings[i]);
                    if (pendings[i].said >= 0) { /* its pipe is still open: a descendant holds it */
                        close(pendings[i].said);
                        reply("unstarted %s\n", pendings[i].id);
                    }
                }
                pendings[i] = pendings[--pending_count];
                break;
            }
        }
        reply("exit %ld\n", (long) pid);
    }
}

static int serve(void) {
    sigset_t child;
    sigemptyset(&child);
    sigaddset(&child, SIGCHLD);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_BLOCK, &child, NULL);
    int exits = signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
    if (exits < 0) {
        fail(2, "signalfd", NULL);
    }
    signal(SIGPIPE, SIG_IGN); /* a server gone: its write fails, and the helper ends */
    size_t capacity = 65536, length = 0;
    char *buffer = malloc(capacity);
    struct pollfd *fds = NULL;
    size_t fds_capacity = 0;
    for (;;) {
        if (fds_capacity < pending_count + 2) {
            fds_capacity = (pending_count + 2) * 2;
            fds = realloc(fds, fds_capacity * sizeof *fds);
        }
        if (buffer == NULL || fds == NULL) {
            fail(2, "out of memory", NULL);
        }
        fds[0] = (struct pollfd) {0, POLLIN, 0};
        fds[1] = (struct pollfd) {exits, POLLIN, 0};
        size_t n = 2;
        for (size_t i = 0; i < pending_count; i++) {
            if (pendings[i].said >= 0) {
                fds[n++] = (struct pollfd) {pendings[i].said, POLLIN, 0};
            }
        }
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail(2, "poll", NULL);
        }
        for (size_t i = 0; i < pending_count; i++) {
            if (pendings[i].said >= 0) {
                hear(&pendings[i]);
            }
        }
        if (fds[1].revents != 0) {
            struct signalfd_siginfo info;
            while (read(exits, &info, sizeof info) > 0) {
            }
            reap();
        }
        if (fds[0].revents != 0) {
            ssize_t got = read(0, buffer + length, capacity - length);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got <= 0) {
                return 0; /* the server is gone or done: the supervisors live on without the helper */
            }
            length += (size_t) got;
            for (;;) {
                char *newline = memchr(buffer, '\n', length < 16 ? length : 16);
                if (newline == NULL) {
                    if (length >= 16) {
                        errno = 0;
                        fail(2, "--serve:", "a request does not start with its length");
                    }
                    break;
                }
                /* The length is read from a copy: the buffer is left as it is, and may move when it grows. */
                char digits[16];
                size_t header = (size_t) (newline - buffer) + 1;
                memcpy(digits, buffer, header - 1);
                digits[header - 1] = '\0';
                size_t size = (size_t) parse_number(digits, "a request's length");
                if (size == 0 || size > MAX_REQUEST_BYTES) {
                    errno = 0;
                    fail(2, "--serve:", "a request's length is out of bounds");
                }
                if (header + size > capacity) {
                    capacity = header + size;
                    buffer = realloc(buffer, capacity);
                    if (buffer == NULL) {
                        fail(2, "out of memory", NULL);
                    }
                }
                if (length < header + size) {
                    break;
                }
                fork_supervisor(buffer + header, size);
                memmove(buffer, buffer + header + size, length - header - size);
                length -= header + size;
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--serve") == 0) {
        return serve();
    }
    return launch(argc, argv);
}
