/*
 * hiredis, the C client most C and C-backed clients build on, against the
 * real daemon: its command formatter (binary-safe %b arguments, a password
 * with a space in it as one argument), its pipelining API and its RESP2
 * reader on every reply type the daemon sends. What the daemon replies is
 * checked byte for byte by the Python suites; this program checks that
 * hiredis reads it as it reads Redis.
 *
 * It starts nothing: test_server.py starts the daemons through the suites'
 * one launcher and passes where they listen in the environment:
 *   CUCKOOD_PORT        a daemon without a password
 *   CUCKOOD_UNIXSOCKET  that daemon's Unix socket
 *   CUCKOOD_AUTH_PORT   a daemon with CUCKOOD_PASSWORD as its requirepass
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int port, auth_port;
static const char *unixsocket, *password;

static redisContext *connect_to(int p)
{
    redisContext *c = redisConnect("127.0.0.1", p);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    return c;
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

static void expect_str(redisReply *r, const char *s, size_t len)
{
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_int_equal(r->len, len);
    assert_memory_equal(r->str, s, len);
    freeReplyObject(r);
}

static void test_ping_echo(void **state)
{
    redisContext *c = connect_to(port);
    expect_status(redisCommand(c, "PING"), "PONG");
    expect_str(redisCommand(c, "PING hello"), "hello", 5);
    expect_str(redisCommand(c, "ECHO %b", "a\0b\r\n", (size_t)5), "a\0b\r\n",
               5);
    expect_str(redisCommand(c, "ECHO %b", "", (size_t)0), "", 0);
    expect_error(redisCommand(c, "PING a b"),
                 "ERR wrong number of arguments for 'ping' command");
    /* An error reply leaves the connection usable. */
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_pipeline_10k(void **state)
{
    redisContext *c = connect_to(port);
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

static void test_reply_types(void **state)
{
    redisContext *c = connect_to(port);
    redisReply *r = redisCommand(c, "CLIENT ID");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > 0);
    freeReplyObject(r);
    r = redisCommand(c, "CLIENT GETNAME");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    expect_status(redisCommand(c, "CLIENT SETNAME worker-1"), "OK");
    expect_str(redisCommand(c, "CLIENT GETNAME"), "worker-1", 8);
    r = redisCommand(c, "CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_non_null(strstr(r->str, "name=worker-1 "));
    freeReplyObject(r);
    r = redisCommand(c, "TIME");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_STRING);
    assert_true(atoll(r->element[0]->str) > 1600000000);
    freeReplyObject(r);
    /* A nested array with integers, as HELLO answers in RESP2. */
    r = redisCommand(c, "HELLO 2 SETNAME hi");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 14);
    assert_string_equal(r->element[0]->str, "server");
    assert_string_equal(r->element[1]->str, "redis");
    assert_string_equal(r->element[4]->str, "proto");
    assert_int_equal(r->element[5]->type, REDIS_REPLY_INTEGER);
    assert_int_equal(r->element[5]->integer, 2);
    assert_string_equal(r->element[9]->str, "standalone");
    assert_string_equal(r->element[11]->str, "master");
    assert_int_equal(r->element[13]->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    expect_str(redisCommand(c, "CLIENT GETNAME"), "hi", 2);
    redisFree(c);
}

static void test_auth(void **state)
{
    redisContext *c = connect_to(auth_port);
    expect_error(redisCommand(c, "PING"), "NOAUTH Authentication required.");
    /* %s sends the password as one argument, space and all. */
    expect_status(redisCommand(c, "AUTH %s", password), "OK");
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

static void test_unix_socket(void **state)
{
    redisContext *c = redisConnectUnix(unixsocket);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    expect_status(redisCommand(c, "PING"), "PONG");
    redisFree(c);
}

int main(void)
{
    const char *p = getenv("CUCKOOD_PORT");
    const char *ap = getenv("CUCKOOD_AUTH_PORT");
    unixsocket = getenv("CUCKOOD_UNIXSOCKET");
    password = getenv("CUCKOOD_PASSWORD");
    if (p == NULL || ap == NULL || unixsocket == NULL || password == NULL) {
        fprintf(stderr, "test_server: run by test_server.py, which starts "
                        "the daemons (CUCKOOD_PORT, CUCKOOD_AUTH_PORT, "
                        "CUCKOOD_PASSWORD, CUCKOOD_UNIXSOCKET)\n");
        return 2;
    }
    port = atoi(p);
    auth_port = atoi(ap);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping_echo),   cmocka_unit_test(test_pipeline_10k),
        cmocka_unit_test(test_reply_types), cmocka_unit_test(test_auth),
        cmocka_unit_test(test_unix_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL) != 0;
}
