/* The error table: every code has a message and an HTTP status; helpers fill reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rubick/error.h"

static void every_code_has_message_and_status(void **state)
{
	(void)state;
	for (int code = 0; code > -RK_ERRCODE_COUNT; code--) {
		assert_string_not_equal(rk_strerror(code), "unknown error");
		int http = rk_error_http_status(code);
		assert_true(http >= 200 && http < 600);
	}
	assert_string_equal(rk_strerror(-1000), "unknown error");
	assert_int_equal(rk_error_http_status(-1000), 500);
	assert_int_equal(rk_error_http_status(RK_ENOTFOUND), 404);
	assert_int_equal(rk_error_http_status(RK_EINVAL), 400);
}

static void set_and_prefix(void **state)
{
	(void)state;
	struct rk_error err;
	assert_int_equal(rk_error_set(&err, RK_EINVAL, "line %d: bad", 3), RK_EINVAL);
	assert_int_equal(err.code, RK_EINVAL);
	assert_string_equal(err.msg, "line 3: bad");
	assert_int_equal(rk_error_prefix(&err, "%s", "zoo.model"), RK_EINVAL);
	assert_string_equal(err.msg, "zoo.model: line 3: bad");
	rk_error_clear(&err);
	assert_int_equal(err.code, RK_OK);
	assert_string_equal(err.msg, "");
	/* A NULL report is allowed everywhere. */
	assert_int_equal(rk_error_set(NULL, RK_ERANGE, "x"), RK_ERANGE);
	assert_int_equal(rk_error_prefix(NULL, "x"), RK_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_code_has_message_and_status),
		cmocka_unit_test(set_and_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
