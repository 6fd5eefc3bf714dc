// Thesis Figure 4-1 (b): a transaction that writes to n consecutive pages.
// The figure's lines are kept as printed, with the scan's OCR slips fixed
// ("int i:" is "int i;", a stray "3" is "}"); its "..." is filled in with
// the setup a complete program needs.

int n = 1024;
int main(void) {
    xInit(".", NONDURABLE);
    {
int* x = xMmap("input.db",
               n*PAGESIZE);
int i;

xbegin();
for (i = 0; i < n; i++) {
  x[i*PAGESIZE/sizeof(int)] = i;
}
xend();

    }
    xMunmap("input.db");
    xShutdown();
    return 0;
}
