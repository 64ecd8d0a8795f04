/*
 * Integration tests: start the real cuckood on a free port (path from the
 * CUCKOOD_BIN environment variable or argv[1]) and drive it with hiredis's
 * client and with raw sockets where exact bytes matter (RESP3, protocol
 * errors, connection closes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *daemon_bin;
static char tmpdir[256];

typedef struct daemon {
    pid_t pid;
    int port;
    char dir[300];
} daemon_t;

static daemon_t main_d;     /* no password */
static rlim_t child_nofile; /* RLIMIT_NOFILE for the next daemon, 0 = keep */
static daemon_t auth_d;     /* --requirepass s3cret */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A port that was free a moment ago: bind port 0, read it, close. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static bool ping_ok(int port)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    bool ok = false;
    if (c != NULL && !c->err) {
        redisReply *r = redisCommand(c, "PING");
        /* NOAUTH also proves the server is up. */
        ok = r != NULL &&
             (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR);
        freeReplyObject(r);
    }
    if (c != NULL)
        redisFree(c);
    return ok;
}

/* The pid that INFO server reports on port (after AUTH when password is not
 * NULL), or 0 while nothing answers with one. */
static long answering_pid(int port, const char *password)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    long pid = 0;
    if (c != NULL && !c->err) {
        if (password != NULL)
            freeReplyObject(redisCommand(c, "AUTH %s", password));
        redisReply *r = redisCommand(c, "INFO server");
        const char *p = NULL;
        if (r != NULL && r->type == REDIS_REPLY_STRING)
            p = strstr(r->str, "process_id:");
        if (p != NULL)
            pid = strtol(p + strlen("process_id:"), NULL, 10);
        freeReplyObject(r);
    }
    if (c != NULL)
        redisFree(c);
    return pid;
}

/* Starts the daemon with extra "--directive value" arguments (NULL-ended).
 * It is up when its port answers INFO server with the pid started: another
 * process answering there (the port was taken meanwhile, e.g. by a parallel
 * test's daemon) or an exit means another try on a new port. */
static int start_daemon(daemon_t *d, const char *name, ...)
{
    const char *extra[32];
    int nextra = 0;
    va_list ap;
    va_start(ap, name);
    const char *s;
    const char *password = NULL;
    while ((s = va_arg(ap, const char *)) != NULL && nextra < 30) {
        if (nextra > 0 && strcmp(extra[nextra - 1], "--requirepass") == 0)
            password = s;
        extra[nextra++] = s;
    }
    va_end(ap);

    snprintf(d->dir, sizeof(d->dir), "%s/%s", tmpdir, name);
    mkdir(d->dir, 0700);
    for (int attempt = 0; attempt < 5; attempt++) {
        d->port = free_port();
        if (d->port <= 0)
            continue;
        char port[16];
        snprintf(port, sizeof(port), "%d", d->port);
        const char *argv[48];
        int n = 0;
        argv[n++] = daemon_bin;
        argv[n++] = "--port";
        argv[n++] = port;
        argv[n++] = "--dir";
        argv[n++] = d->dir;
        argv[n++] = "--loglevel";
        argv[n++] = "verbose";
        for (int i = 0; i < nextra; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            char log[400];
            snprintf(log, sizeof(log), "%s/daemon.log", d->dir);
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            if (child_nofile > 0) {
                struct rlimit rl = {child_nofile, child_nofile};
                setrlimit(RLIMIT_NOFILE, &rl);
            }
            /* A crashed test run must not leave daemons behind. */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (chdir(d->dir) != 0)
                _exit(127);
            execv(daemon_bin, (char *const *)argv);
            _exit(127);
        }
        d->pid = pid;
        /* Wait (bounded) for its own answer. */
        for (int i = 0; i < 500; i++) {
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                d->pid = 0;
                break;
            }
            long got = answering_pid(d->port, password);
            if (got == (long)pid)
                return 0;
            if (got > 0) {
                fprintf(stderr, "port %d is answered by pid %ld, not by the "
                        "daemon started (pid %ld): trying another port\n",
                        d->port, got, (long)pid);
                break;
            }
            sleep_ms(20);
        }
        if (d->pid != 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
            d->pid = 0;
        }
    }
    return -1;
}

/* Sends SIGTERM and returns the exit status (-1 if it did not exit
 * normally). */
static int stop_daemon(daemon_t *d)
{
    if (d->pid <= 0)
        return -1;
    kill(d->pid, SIGTERM);
    int st = 0;
    pid_t r = waitpid(d->pid, &st, 0);
    d->pid = 0;
    if (r < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static redisContext *connect_to(const daemon_t *d)
{
    redisContext *c = redisConnect("127.0.0.1", d->port);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    return c;
}

/* ---- raw sockets -------------------------------------------------------- */

static int raw_connect(const daemon_t *d)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)d->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void raw_send(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, s, len, MSG_NOSIGNAL);
        assert_true(n > 0);
        s += n;
        len -= (size_t)n;
    }
}

/* Reads until want bytes arrived, EOF, or 5 s without data. Returns the
 * bytes read; *eof tells whether the peer closed. */
static size_t raw_read(int fd, char *buf, size_t want, bool *eof)
{
    size_t got = 0;
    *eof = false;
    while (got < want) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            break;
        ssize_t n = recv(fd, buf + got, want - got, 0);
        if (n == 0) {
            *eof = true;
            break;
        }
        if (n < 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* Expects exactly the bytes of expect in answer to req. */
static void raw_expect(int fd, const char *req, const char *expect)
{
    char buf[4096];
    bool eof;
    raw_send(fd, req, strlen(req));
    size_t n = raw_read(fd, buf, strlen(expect), &eof);
    assert_int_equal(n, strlen(expect));
    assert_memory_equal(buf, expect, n);
}

static bool raw_closed(int fd)
{
    char buf[64];
    bool eof;
    raw_read(fd, buf, sizeof(buf) - 1, &eof);
    return eof;
}

/* ---- fixtures ----------------------------------------------------------- */

static int group_setup(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/cuckood-integ-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    if (start_daemon(&main_d, "main", "--unixsocket", "sock",
                     "--unixsocketperm", "700", NULL) < 0)
        return -1;
    if (start_daemon(&auth_d, "auth", "--requirepass", "s3cret", NULL) < 0)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    stop_daemon(&main_d);
    stop_daemon(&auth_d);
    /* Keep the logs when asked to, for debugging a failure. */
    if (tmpdir[0] != '\0' && getenv("CUCKOOD_KEEP_TMP") == NULL) {
        pid_t pid = fork();
        if (pid == 0) {
            execlp("rm", "rm", "-rf", tmpdir, (char *)NULL);
            _exit(127);
        }
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    return 0;
}

static void expect_status(redisReply *r, const char *s)
{
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    assert_string_equal(r->str, s);
    freeReplyObject(r);
}

static void expect_error(redisReply *r, const char *s)
{
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    assert_string_equal(r->str, s);
    freeReplyObject(r);
}

static void expect_int(redisReply *r, long long v)
{
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_int_equal(r->integer, v);
    freeReplyObject(r);
}

static void expect_str(redisReply *r, const char *s, size_t len)
{
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_int_equal(r->len, len);
    assert_memory_equal(r->str, s, len);
    freeReplyObject(r);
}

/* ---- tests -------------------------------------------------------------- */

static void test_ping_echo(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_status(redisCommand(c, "PING"), "PONG");
    expect_str(redisCommand(c, "PING hello"), "hello", 5);
    expect_str(redisCommand(c, "ECHO %b", "a\0b\r\n", (size_t)5), "a\0b\r\n",
               5);
    expect_str(redisCommand(c, "ECHO %b", "", (size_t)0), "", 0);
    expect_error(redisCommand(c, "PING a b"),
                 "ERR wrong number of arguments for 'ping' command");
    redisFree(c);
}

static void test_pipeline_10k(void **state)
{
    redisContext *c = connect_to(&main_d);
    enum { N = 10000 };
    for (int i = 0; i < N; i++)
        assert_int_equal(redisAppendCommand(c, "ECHO %d", i), REDIS_OK);
    for (int i = 0; i < N; i++) {
        redisReply *r;
        char want[16];
        assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
        int n = snprintf(want, sizeof(want), "%d", i);
        expect_str(r, want, (size_t)n);
    }
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_unknown_command(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_error(redisCommand(c, "FOO a b"),
                 "ERR unknown command 'FOO', with args beginning with: 'a' "
                 "'b' ");
    expect_error(redisCommand(c, "nosuch"),
                 "ERR unknown command 'nosuch', with args beginning with: ");
    /* Arguments are cut at 128 bytes in all. */
    char longarg[201];
    memset(longarg, 'x', 200);
    longarg[200] = '\0';
    char want[300];
    snprintf(want, sizeof(want),
             "ERR unknown command 'FOO', with args beginning with: '%.128s' ",
             longarg);
    expect_error(redisCommand(c, "FOO %s %s", longarg, "more"), want);
    /* CR and LF in arguments do not break the error line. */
    expect_error(redisCommand(c, "FOO %b", "a\r\nb", (size_t)4),
                 "ERR unknown command 'FOO', with args beginning with: "
                 "'a  b' ");
    /* The connection stays usable. */
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_arity(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_error(redisCommand(c, "ECHO"),
                 "ERR wrong number of arguments for 'echo' command");
    expect_error(redisCommand(c, "echo a b"),
                 "ERR wrong number of arguments for 'echo' command");
    expect_error(redisCommand(c, "SELECT"),
                 "ERR wrong number of arguments for 'select' command");
    expect_error(redisCommand(c, "CLIENT SETNAME"),
                 "ERR wrong number of arguments for 'client|setname' "
                 "command");
    expect_error(redisCommand(c, "CLIENT"),
                 "ERR wrong number of arguments for 'client' command");
    expect_error(redisCommand(c, "CLIENT NOPE"),
                 "ERR unknown subcommand 'NOPE'. Try CLIENT HELP.");
    redisFree(c);
}

static void test_select(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_error(redisCommand(c, "SELECT 16"), "ERR DB index is out of range");
    expect_error(redisCommand(c, "SELECT -1"), "ERR DB index is out of range");
    expect_error(redisCommand(c, "SELECT x"),
                 "ERR value is not an integer or out of range");
    expect_error(redisCommand(c, "SELECT 1x"),
                 "ERR value is not an integer or out of range");
    expect_status(redisCommand(c, "SELECT 15"), "OK");
    expect_status(redisCommand(c, "SELECT 0"), "OK");
    redisFree(c);
}

static void test_client(void **state)
{
    redisContext *c = connect_to(&main_d);
    redisReply *r = redisCommand(c, "CLIENT ID");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long id = r->integer;
    assert_true(id > 0);
    freeReplyObject(r);
    r = redisCommand(c, "CLIENT GETNAME");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    expect_status(redisCommand(c, "CLIENT SETNAME worker-1"), "OK");
    expect_str(redisCommand(c, "CLIENT GETNAME"), "worker-1", 8);
    expect_error(redisCommand(c, "CLIENT SETNAME %s", "a b"),
                 "ERR Client names cannot contain spaces, newlines or "
                 "special characters.");
    expect_status(redisCommand(c, "CLIENT SETINFO LIB-NAME mylib"), "OK");
    expect_status(redisCommand(c, "CLIENT SETINFO lib-ver 1.2"), "OK");
    expect_error(redisCommand(c, "CLIENT SETINFO color red"),
                 "ERR Unrecognized option 'color'");
    r = redisCommand(c, "CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char want[64];
    snprintf(want, sizeof(want), "id=%lld ", id);
    assert_non_null(strstr(r->str, want));
    assert_non_null(strstr(r->str, "name=worker-1 "));
    assert_non_null(strstr(r->str, "lib-name=mylib lib-ver=1.2\n"));
    freeReplyObject(r);
    r = redisCommand(c, "CLIENT INFO");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(strncmp(r->str, want, strlen(want)) == 0);
    freeReplyObject(r);
    redisFree(c);
}

static void test_hello(void **state)
{
    redisContext *c = connect_to(&main_d);
    redisReply *r = redisCommand(c, "HELLO 2 SETNAME hi");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 14);
    assert_string_equal(r->element[0]->str, "server");
    assert_string_equal(r->element[1]->str, "redis");
    assert_string_equal(r->element[4]->str, "proto");
    assert_int_equal(r->element[5]->integer, 2);
    assert_string_equal(r->element[8]->str, "mode");
    assert_string_equal(r->element[9]->str, "standalone");
    assert_string_equal(r->element[11]->str, "master");
    assert_int_equal(r->element[13]->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    expect_str(redisCommand(c, "CLIENT GETNAME"), "hi", 2);
    expect_error(redisCommand(c, "HELLO 4"),
                 "NOPROTO unsupported protocol version");
    expect_error(redisCommand(c, "HELLO x"),
                 "ERR Protocol version is not an integer or out of range");
    expect_error(redisCommand(c, "HELLO 3 BOGUS"),
                 "ERR Syntax error in HELLO option 'BOGUS'");
    redisFree(c);

    /* RESP3 bytes on a raw socket. */
    int fd = raw_connect(&main_d);
    char buf[1024];
    bool eof;
    const char *hello3 = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
    raw_send(fd, hello3, strlen(hello3));
    const char *head = "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n";
    size_t n = raw_read(fd, buf, strlen(head), &eof);
    assert_int_equal(n, strlen(head));
    assert_memory_equal(buf, head, n);
    /* Drain the rest of the map: it ends with "modules" and an empty
     * array. */
    const char *tail = "$7\r\nmodules\r\n*0\r\n";
    size_t got = 0;
    while (got < strlen(tail) ||
           memcmp(buf + got - strlen(tail), tail, strlen(tail)) != 0) {
        size_t m = raw_read(fd, buf + got, 1, &eof);
        assert_int_equal(m, 1);
        got++;
        assert_true(got < sizeof(buf) - 1);
    }
    buf[got] = '\0';
    assert_non_null(strstr(buf, "$5\r\nproto\r\n:3\r\n"));
    /* CONFIG GET answers a map in RESP3. */
    char req[128], want[128];
    snprintf(req, sizeof(req),
             "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$4\r\nport"
             "\r\n");
    char port[16];
    int plen = snprintf(port, sizeof(port), "%d", main_d.port);
    snprintf(want, sizeof(want), "%%1\r\n$4\r\nport\r\n$%d\r\n%s\r\n", plen,
             port);
    raw_expect(fd, req, want);
    /* Null is "_" in RESP3. */
    raw_expect(fd, "*2\r\n$6\r\nCLIENT\r\n$7\r\nGETNAME\r\n", "_\r\n");
    close(fd);
}

static void test_auth_without_password(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_error(redisCommand(c, "AUTH foo"),
                 "ERR AUTH <password> called without any password configured "
                 "for the default user. Are you sure your configuration is "
                 "correct?");
    expect_status(redisCommand(c, "AUTH default anything"), "OK");
    expect_error(redisCommand(c, "AUTH someone anything"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    redisFree(c);
}

static void test_auth(void **state)
{
    redisContext *c = connect_to(&auth_d);
    expect_error(redisCommand(c, "PING"), "NOAUTH Authentication required.");
    expect_error(redisCommand(c, "CLIENT ID"),
                 "NOAUTH Authentication required.");
    /* Unknown commands are reported as such before authentication, as
     * Redis does. */
    expect_error(redisCommand(c, "NOPE"),
                 "ERR unknown command 'NOPE', with args beginning with: ");
    expect_error(redisCommand(c, "AUTH wrong"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    expect_error(redisCommand(c, "AUTH default wrong"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    expect_error(redisCommand(c, "AUTH s3cre"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    expect_error(redisCommand(c, "AUTH s3cret1"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    expect_error(redisCommand(c, "AUTH other s3cret"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    expect_error(redisCommand(c, "HELLO 2"),
                 "NOAUTH HELLO must be called with the client already "
                 "authenticated, otherwise the HELLO <proto> AUTH <user> "
                 "<pass> option can be used to authenticate the client and "
                 "select the RESP protocol version at the same time");
    expect_status(redisCommand(c, "AUTH s3cret"), "OK");
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);

    c = connect_to(&auth_d);
    expect_error(redisCommand(c, "HELLO 2 AUTH default nope"),
                 "WRONGPASS invalid username-password pair or user is "
                 "disabled.");
    redisReply *r = redisCommand(c, "HELLO 2 AUTH default s3cret");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);

    c = connect_to(&auth_d);
    expect_status(redisCommand(c, "AUTH default s3cret"), "OK");
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);

    /* QUIT works before authentication. */
    int fd = raw_connect(&auth_d);
    raw_expect(fd, "*1\r\n$4\r\nQUIT\r\n", "+OK\r\n");
    assert_true(raw_closed(fd));
    close(fd);

    /* Removing the password at run time frees clients that waited. */
    redisContext *waiting = connect_to(&auth_d);
    expect_error(redisCommand(waiting, "PING"),
                 "NOAUTH Authentication required.");
    c = connect_to(&auth_d);
    expect_status(redisCommand(c, "AUTH s3cret"), "OK");
    expect_status(redisCommand(c, "CONFIG SET requirepass %s", ""), "OK");
    expect_status(redisCommand(waiting, "PING"), "PONG");
    expect_status(redisCommand(c, "CONFIG SET requirepass s3cret"), "OK");
    redisFree(c);
    redisFree(waiting);
    c = connect_to(&auth_d);
    expect_error(redisCommand(c, "PING"), "NOAUTH Authentication required.");
    redisFree(c);

    /* An unauthenticated client may not send big requests. */
    fd = raw_connect(&auth_d);
    const char *big = "*1\r\n$100000\r\n";
    raw_send(fd, big, strlen(big));
    char buf[256];
    bool eof;
    size_t n = raw_read(fd, buf, 5, &eof);
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "-ERR ", 5);
    assert_true(raw_closed(fd));
    close(fd);
}

static void test_protocol_error(void **state)
{
    redisContext *other = connect_to(&main_d);
    int fd = raw_connect(&main_d);
    /* The command before the bad frame is answered, then the error, then
     * the connection closes. */
    raw_expect(fd, "*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\n",
               "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");
    assert_true(raw_closed(fd));
    close(fd);

    fd = raw_connect(&main_d);
    raw_expect(fd, "*1\r\n:5\r\n",
               "-ERR Protocol error: expected '$', got "
               "':'\r\n");
    assert_true(raw_closed(fd));
    close(fd);

    expect_status(redisCommand(other, "PING"), "PONG");
    redisFree(other);
}

static void test_inline_and_empty(void **state)
{
    int fd = raw_connect(&main_d);
    raw_expect(fd, "PING\r\n", "+PONG\r\n");
    raw_expect(fd, "*0\r\n\r\nECHO hi\r\n", "$2\r\nhi\r\n");
    close(fd);
}

static void test_half_close_gets_replies(void **state)
{
    /* A client that sends a big pipeline and shuts down its sending side
     * still receives every reply. */
    enum { N = 20000 };
    static char req[N * 14];
    size_t len = 0;
    for (int i = 0; i < N; i++) {
        memcpy(req + len, "*1\r\n$4\r\nPING\r\n", 14);
        len += 14;
    }
    int fd = raw_connect(&main_d);
    raw_send(fd, req, len);
    shutdown(fd, SHUT_WR);
    static char buf[N * 7 + 1];
    bool eof;
    size_t n = raw_read(fd, buf, N * 7, &eof);
    assert_int_equal(n, N * 7);
    for (int i = 0; i < N; i++)
        assert_memory_equal(buf + i * 7, "+PONG\r\n", 7);
    assert_true(raw_closed(fd));
    close(fd);
}

static void test_quit(void **state)
{
    int fd = raw_connect(&main_d);
    /* Commands after QUIT in the same batch are not run. */
    raw_expect(fd, "*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n", "+OK\r\n");
    assert_true(raw_closed(fd));
    close(fd);
}

static void test_unix_socket(void **state)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/sock", main_d.dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    redisContext *c = redisConnectUnix(path);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_info_time_config(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_status(redisCommand(c, "PING"), "PONG");
    redisReply *r = redisCommand(c, "INFO");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_non_null(strstr(r->str, "redis_version:"));
    assert_non_null(strstr(r->str, "\r\nloading:0\r\n"));
    assert_non_null(strstr(r->str, "# Memory\r\nused_memory:"));
    assert_null(strstr(r->str, "cmdstat_"));
    freeReplyObject(r);
    r = redisCommand(c, "INFO commandstats");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_non_null(strstr(r->str, "# Commandstats\r\n"));
    assert_non_null(strstr(r->str, "cmdstat_ping:calls="));
    /* The arity errors of test_arity count as rejected ECHO calls. */
    const char *echo = strstr(r->str, "cmdstat_echo:");
    assert_non_null(echo);
    const char *rej = strstr(echo, "rejected_calls=");
    assert_non_null(rej);
    assert_true(atoi(rej + strlen("rejected_calls=")) >= 1);
    assert_null(strstr(r->str, "# Server"));
    freeReplyObject(r);
    r = redisCommand(c, "TIME");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_true(atoll(r->element[0]->str) > 1600000000);
    freeReplyObject(r);
    r = redisCommand(c, "CONFIG GET maxclients");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "maxclients");
    freeReplyObject(r);
    expect_status(redisCommand(c, "CONFIG SET loglevel notice"), "OK");
    r = redisCommand(c, "CONFIG SET nosuchdirective 1");
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    assert_true(strncmp(r->str, "ERR ", 4) == 0);
    freeReplyObject(r);
    expect_error(redisCommand(c, "CONFIG SET loglevel"),
                 "ERR wrong number of arguments for 'config|set' command");
    r = redisCommand(c, "COMMAND COUNT");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer >= 20);
    freeReplyObject(r);
    r = redisCommand(c, "COMMAND INFO ping nosuch");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[0]->element[0]->str, "ping");
    assert_int_equal(r->element[0]->element[1]->integer, -1);
    assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    r = redisCommand(c, "COMMAND LIST FILTERBY PATTERN fl*");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2); /* flushdb, flushall */
    freeReplyObject(r);
    r = redisCommand(c, "COMMAND LIST FILTERBY ACLCAT connection");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_true(r->elements >= 6);
    freeReplyObject(r);
    expect_error(redisCommand(c, "COMMAND LIST FILTERBY nope x"),
                 "ERR syntax error");
    r = redisCommand(c, "COMMAND DOCS scan");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "scan");
    freeReplyObject(r);
    redisFree(c);
}

static void test_maxclients(void **state)
{
    redisContext *c = connect_to(&main_d);
    redisReply *r = redisCommand(c, "INFO clients");
    const char *p = strstr(r->str, "connected_clients:");
    assert_non_null(p);
    long connected = atol(p + strlen("connected_clients:"));
    freeReplyObject(r);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "CONFIG SET maxclients %ld", connected + 1);
    expect_status(redisCommand(c, cmd), "OK");
    redisContext *c2 = connect_to(&main_d);
    expect_status(redisCommand(c2, "PING"), "PONG");
    int fd = raw_connect(&main_d);
    char buf[128];
    bool eof;
    const char *want = "-ERR max number of clients reached\r\n";
    size_t n = raw_read(fd, buf, strlen(want), &eof);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(buf, want, n);
    assert_true(raw_closed(fd));
    close(fd);
    expect_status(redisCommand(c, "CONFIG SET maxclients 10000"), "OK");
    redisFree(c2);
    redisFree(c);
}

/* Keyspace commands need filters, which only CF.RESERVE makes. */
static bool have_cf(redisContext *c)
{
    redisReply *r = redisCommand(c, "CF.RESERVE __probe 100");
    bool ok = !(r->type == REDIS_REPLY_ERROR &&
                strncmp(r->str, "ERR unknown command", 19) == 0);
    freeReplyObject(r);
    if (ok)
        freeReplyObject(redisCommand(c, "DEL __probe"));
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_keyspace_commands(void **state)
{
    redisContext *c = connect_to(&main_d);
    if (!have_cf(c)) {
        redisFree(c);
        skip();
    }
    expect_status(redisCommand(c, "SELECT 5"), "OK");
    expect_status(redisCommand(c, "FLUSHDB"), "OK");
    expect_int(redisCommand(c, "DBSIZE"), 0);
    expect_status(redisCommand(c, "CF.RESERVE a 100"), "OK");
    expect_status(redisCommand(c, "CF.RESERVE b 100"), "OK");
    expect_status(redisCommand(c, "CF.RESERVE %b 100", "c\0c", (size_t)3),
                  "OK");
    expect_int(redisCommand(c, "DBSIZE"), 3);
    expect_status(redisCommand(c, "TYPE a"), "MBbloomCF");
    expect_status(redisCommand(c, "TYPE zz"), "none");

    redisReply *r = redisCommand(c, "KEYS *");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 3);
    freeReplyObject(r);
    r = redisCommand(c, "KEYS [ab]");
    assert_int_equal(r->elements, 2);
    char *names[2] = {r->element[0]->str, r->element[1]->str};
    qsort(names, 2, sizeof(names[0]), cmp_str);
    assert_string_equal(names[0], "a");
    assert_string_equal(names[1], "b");
    freeReplyObject(r);

    /* SCAN: a full walk reports every key; TYPE filters. */
    int seen = 0;
    char cursor[32] = "0";
    do {
        r = redisCommand(c, "SCAN %s COUNT 1", cursor);
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        assert_int_equal(r->elements, 2);
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        seen += (int)r->element[1]->elements;
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    assert_true(seen >= 3);
    r = redisCommand(c, "SCAN 0 COUNT 1000 TYPE string");
    assert_int_equal(r->element[1]->elements, 0);
    freeReplyObject(r);
    r = redisCommand(c, "SCAN 0 COUNT 1000 MATCH a TYPE MBbloomCF");
    assert_int_equal(r->element[1]->elements, 1);
    assert_string_equal(r->element[1]->element[0]->str, "a");
    freeReplyObject(r);
    expect_error(redisCommand(c, "SCAN x"), "ERR invalid cursor");
    expect_error(redisCommand(c, "SCAN 0 COUNT 0"), "ERR syntax error");
    expect_error(redisCommand(c, "SCAN 0 BOGUS 1"), "ERR syntax error");

    /* SELECT isolation: the same name in another database is another
     * key. */
    expect_status(redisCommand(c, "SELECT 6"), "OK");
    expect_status(redisCommand(c, "FLUSHDB"), "OK");
    expect_int(redisCommand(c, "EXISTS a"), 0);
    expect_status(redisCommand(c, "CF.RESERVE a 100"), "OK");
    expect_int(redisCommand(c, "DBSIZE"), 1);
    expect_status(redisCommand(c, "SELECT 5"), "OK");

    expect_int(redisCommand(c, "EXISTS a b b zz"), 3);
    expect_int(redisCommand(c, "DEL a zz"), 1);
    expect_int(redisCommand(c, "UNLINK a"), 0);
    expect_status(redisCommand(c, "RENAME b d"), "OK");
    expect_int(redisCommand(c, "EXISTS b"), 0);
    expect_status(redisCommand(c, "TYPE d"), "MBbloomCF");
    expect_error(redisCommand(c, "RENAME nope x"), "ERR no such key");
    expect_int(redisCommand(c, "DBSIZE"), 2);

    r = redisCommand(c, "INFO keyspace");
    assert_non_null(strstr(r->str, "db5:keys=2,expires=0,avg_ttl=0\r\n"));
    assert_non_null(strstr(r->str, "db6:keys=1,expires=0,avg_ttl=0\r\n"));
    freeReplyObject(r);

    expect_status(redisCommand(c, "FLUSHDB"), "OK");
    expect_int(redisCommand(c, "DBSIZE"), 0);
    expect_status(redisCommand(c, "SELECT 6"), "OK");
    expect_int(redisCommand(c, "DBSIZE"), 1);
    expect_status(redisCommand(c, "FLUSHALL"), "OK");
    expect_int(redisCommand(c, "DBSIZE"), 0);
    expect_error(redisCommand(c, "FLUSHALL BOGUS"), "ERR syntax error");
    redisFree(c);
}

/* Runs "cuckood --ping target" and returns its exit status. */
static int run_probe(const char *target)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(daemon_bin, daemon_bin, "--ping", target, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void test_ping_probe(void **state)
{
    char target[64];
    snprintf(target, sizeof(target), "127.0.0.1:%d", main_d.port);
    assert_int_equal(run_probe(target), 0);
    /* A server that wants a password is up too. */
    snprintf(target, sizeof(target), "127.0.0.1:%d", auth_d.port);
    assert_int_equal(run_probe(target), 0);
    char path[400];
    snprintf(path, sizeof(path), "%s/sock", main_d.dir);
    assert_int_equal(run_probe(path), 0);
    /* Nothing listens on a port that was just free. */
    snprintf(target, sizeof(target), "127.0.0.1:%d", free_port());
    assert_int_equal(run_probe(target), 1);
}

static void test_memory_usage(void **state)
{
    redisContext *c = connect_to(&main_d);
    if (!have_cf(c)) {
        redisFree(c);
        skip();
    }
    expect_status(redisCommand(c, "SELECT 7"), "OK");
    redisReply *r = redisCommand(c, "MEMORY USAGE nokey");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    r = redisCommand(c, "INFO memory");
    const char *p = strstr(r->str, "used_memory:");
    assert_non_null(p);
    long long before = atoll(p + strlen("used_memory:"));
    freeReplyObject(r);
    expect_status(redisCommand(c, "CF.RESERVE m 100000"), "OK");
    r = redisCommand(c, "MEMORY USAGE m");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long usage = r->integer;
    freeReplyObject(r);
    /* 100000 items at 12 bits each take at least 150 KB. */
    assert_true(usage >= 150000);
    r = redisCommand(c, "INFO memory");
    p = strstr(r->str, "used_memory:");
    long long after = atoll(p + strlen("used_memory:"));
    freeReplyObject(r);
    assert_true(after - before >= usage - 64);
    assert_true(after - before <= usage + 64);
    expect_int(redisCommand(c, "DEL m"), 1);
    redisFree(c);
}

/* Sends req over and over without reading any reply (at most 64 MB), then
 * reads: true when the server closed the connection before that. */
static bool flood_until_closed(const daemon_t *d, const char *req,
                               size_t reqlen)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)d->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    bool closed = false;
    size_t sent = 0, off = 0; /* off: where in req the stream is */
    while (sent < 64u * 1024 * 1024 && !closed) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 5000) <= 0)
            break;
        if (p.revents & (POLLERR | POLLHUP)) {
            closed = true;
            break;
        }
        ssize_t m =
            send(fd, req + off, reqlen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (m < 0 && errno != EAGAIN)
            closed = true;
        if (m > 0) {
            sent += (size_t)m;
            off = (off + (size_t)m) % reqlen;
        }
    }
    if (!closed) {
        /* Drain: the stream must end (EOF or reset), not deliver all. */
        static char buf[65536];
        for (;;) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 5000) <= 0)
                break;
            ssize_t m = recv(fd, buf, sizeof(buf), 0);
            if (m <= 0) {
                closed = true;
                break;
            }
        }
    }
    close(fd);
    return closed;
}

static void test_output_buffer_limit(void **state)
{
    redisContext *c = connect_to(&main_d);
    expect_status(redisCommand(c, "CONFIG SET client-output-buffer-limit %s",
                               "normal 1mb 0 0"),
                  "OK");
    static char req[32 * 1024 + 64];
    char payload[32 * 1024];
    memset(payload, 'p', sizeof(payload));
    int n = snprintf(req, sizeof(req), "*2\r\n$4\r\nECHO\r\n$%zu\r\n",
                     sizeof(payload));
    memcpy(req + n, payload, sizeof(payload));
    memcpy(req + n + sizeof(payload), "\r\n", 2);
    bool closed =
        flood_until_closed(&main_d, req, (size_t)n + sizeof(payload) + 2);
    assert_true(closed);
    expect_status(redisCommand(c, "CONFIG SET client-output-buffer-limit %s",
                               "normal 0 0 0"),
                  "OK");
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_unauthenticated_pileup(void **state)
{
    /* Without the password, NOAUTH replies may not pile up. */
    static char req[6 * 4096];
    for (size_t i = 0; i < sizeof(req); i += 6)
        memcpy(req + i, "PING\r\n", 6);
    assert_true(flood_until_closed(&auth_d, req, sizeof(req)));
    assert_true(ping_ok(auth_d.port));
}

static void test_idle_timeout(void **state)
{
    daemon_t d = {0};
    assert_int_equal(start_daemon(&d, "timeout", "--timeout", "1", NULL), 0);
    int fd = raw_connect(&d);
    raw_expect(fd, "PING\r\n", "+PONG\r\n");
    /* Closed after one idle second (read waits up to 5 s). */
    assert_true(raw_closed(fd));
    close(fd);
    assert_int_equal(stop_daemon(&d), 0);
}

/* A non-loopback address of this machine, or false. */
static bool local_ip(char *buf, size_t len)
{
    struct ifaddrs *ifs, *i;
    bool found = false;
    if (getifaddrs(&ifs) != 0)
        return false;
    for (i = ifs; i != NULL && !found; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct sockaddr_in *a = (struct sockaddr_in *)i->ifa_addr;
        if ((ntohl(a->sin_addr.s_addr) >> 24) == 127)
            continue;
        found = inet_ntop(AF_INET, &a->sin_addr, buf, (socklen_t)len) != NULL;
    }
    freeifaddrs(ifs);
    return found;
}

static void test_protected_mode(void **state)
{
    char ip[INET_ADDRSTRLEN];
    if (!local_ip(ip, sizeof(ip)))
        skip(); /* no non-loopback interface to connect from */
    daemon_t d = {0};
    assert_int_equal(
        start_daemon(&d, "protected", "--bind", "127.0.0.1", ip, NULL), 0);
    redisContext *c = redisConnect(ip, d.port);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    redisReply *r = redisCommand(c, "PING");
    if (r != NULL) {
        assert_int_equal(r->type, REDIS_REPLY_ERROR);
        assert_true(strncmp(r->str, "DENIED ", 7) == 0);
        freeReplyObject(r);
    }
    redisFree(c);
    /* Loopback clients are served. */
    assert_true(ping_ok(d.port));
    assert_int_equal(stop_daemon(&d), 0);
}

static void test_ipv6_and_pidfile(void **state)
{
    daemon_t d = {0};
    int fd6 = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 lo = {0};
    lo.sin6_family = AF_INET6;
    lo.sin6_addr = in6addr_loopback;
    bool have_v6 =
        fd6 >= 0 && bind(fd6, (struct sockaddr *)&lo, sizeof(lo)) == 0;
    if (fd6 >= 0)
        close(fd6);
    if (!have_v6)
        skip(); /* no IPv6 loopback here */
    assert_int_equal(start_daemon(&d, "ipv6", "--bind", "127.0.0.1", "::1",
                                  "--pidfile", "cuckood.pid", NULL),
                     0);
    redisContext *c = redisConnect("::1", d.port);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    expect_status(redisCommand(c, "PING"), "PONG");
    redisReply *r = redisCommand(c, "CLIENT INFO");
    assert_non_null(strstr(r->str, "addr=[::1]:"));
    freeReplyObject(r);
    redisFree(c);
    char path[400], buf[32] = "";
    snprintf(path, sizeof(path), "%s/cuckood.pid", d.dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof(buf), fp));
    fclose(fp);
    assert_int_equal(atoi(buf), d.pid);
    assert_int_equal(stop_daemon(&d), 0);
    assert_int_equal(access(path, F_OK), -1); /* removed at exit */
}

static void test_fd_limit_caps_maxclients(void **state)
{
    /* With 64 descriptors, maxclients becomes 64 - 32: the 33rd client is
     * refused with Redis's error, and the server keeps serving. */
    daemon_t d = {0};
    child_nofile = 64;
    int rc = start_daemon(&d, "nofile", NULL);
    child_nofile = 0;
    assert_int_equal(rc, 0);
    enum { N = 40 };
    int fds[N];
    int refused = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = raw_connect(&d);
        raw_send(fds[i], "PING\r\n", 6);
        char buf[128];
        bool eof;
        size_t n = raw_read(fds[i], buf, 7, &eof);
        assert_true(n == 7);
        if (memcmp(buf, "+PONG\r\n", 7) != 0) {
            assert_memory_equal(buf, "-ERR ma", 7);
            refused++;
        }
    }
    assert_int_equal(refused, N - 32);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    /* Closed clients free their places. */
    bool served = false;
    for (int i = 0; i < 100 && !served; i++) {
        served = ping_ok(d.port);
        if (!served)
            sleep_ms(20);
    }
    assert_true(served);
    assert_int_equal(stop_daemon(&d), 0);
}

static void test_shutdown_command(void **state)
{
    daemon_t d = {0};
    assert_int_equal(start_daemon(&d, "shutdown", NULL), 0);
    redisContext *c = connect_to(&d);
    expect_error(redisCommand(c, "SHUTDOWN BOGUS"), "ERR syntax error");
    redisReply *r = redisCommand(c, "SHUTDOWN NOSAVE");
    assert_null(r); /* no reply: the connection closes */
    redisFree(c);
    int st = 0;
    assert_int_equal(waitpid(d.pid, &st, 0), d.pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_bad_dir_refuses_to_start(void **state)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(daemon_bin, daemon_bin, "--port", "0", "--unixsocket", "s",
              "--dir", "/nonexistent/cuckood-test", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
}

static void test_sigterm_exits_zero(void **state)
{
    daemon_t d = {0};
    assert_int_equal(start_daemon(&d, "sigterm", NULL), 0);
    redisContext *c = connect_to(&d); /* a client open at shutdown */
    expect_status(redisCommand(c, "PING"), "PONG");
    assert_int_equal(stop_daemon(&d), 0);
    redisFree(c);
}

int main(int argc, char **argv)
{
    daemon_bin = getenv("CUCKOOD_BIN");
    if (argc > 1)
        daemon_bin = argv[1];
    if (daemon_bin == NULL) {
        fprintf(stderr, "usage: test_server /path/to/cuckood "
                        "(or CUCKOOD_BIN=...)\n");
        return 2;
    }
    /* The daemon runs in its own directory: make the path absolute. */
    static char abs_bin[4096];
    if (realpath(daemon_bin, abs_bin) == NULL) {
        fprintf(stderr, "test_server: %s: %s\n", daemon_bin, strerror(errno));
        return 2;
    }
    daemon_bin = abs_bin;
    signal(SIGPIPE, SIG_IGN);
    /* Daemons are started here rather than in a cmocka group setup, whose
     * failure would not fail the run. */
    if (group_setup(NULL) < 0) {
        fprintf(stderr, "test_server: could not start %s\n", daemon_bin);
        group_teardown(NULL);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping_echo),
        cmocka_unit_test(test_pipeline_10k),
        cmocka_unit_test(test_unknown_command),
        cmocka_unit_test(test_arity),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_client),
        cmocka_unit_test(test_hello),
        cmocka_unit_test(test_auth_without_password),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_protocol_error),
        cmocka_unit_test(test_inline_and_empty),
        cmocka_unit_test(test_half_close_gets_replies),
        cmocka_unit_test(test_quit),
        cmocka_unit_test(test_unix_socket),
        cmocka_unit_test(test_info_time_config),
        cmocka_unit_test(test_maxclients),
        cmocka_unit_test(test_keyspace_commands),
        cmocka_unit_test(test_ping_probe),
        cmocka_unit_test(test_memory_usage),
        cmocka_unit_test(test_output_buffer_limit),
        cmocka_unit_test(test_unauthenticated_pileup),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_protected_mode),
        cmocka_unit_test(test_ipv6_and_pidfile),
        cmocka_unit_test(test_fd_limit_caps_maxclients),
        cmocka_unit_test(test_shutdown_command),
        cmocka_unit_test(test_bad_dir_refuses_to_start),
        cmocka_unit_test(test_sigterm_exits_zero),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    group_teardown(NULL);
    return failed != 0;
}
