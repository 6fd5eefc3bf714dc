/* testhelp.c: the counters behind testhelp.h. */
#include "testhelp.h"

int test_failed, test_num;
