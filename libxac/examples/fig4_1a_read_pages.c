// Thesis Figure 4-1 (a): a transaction that reads from n consecutive pages.
// The figure's lines are kept as printed (its "..." is filled in with the
// setup a complete program needs: xInit, n, and the teardown).

int n = 1024;
int main(void) {
    xInit(".", NONDURABLE);
    {
int* x = xMmap("input.db",
               n*PAGESIZE);
int i, value;

xbegin();
for (i = 0; i < n; i++) {
  value = x[i*PAGESIZE/sizeof(int)];
}
xend();

    (void)value;
    }
    xMunmap("input.db");
    xShutdown();
    return 0;
}
