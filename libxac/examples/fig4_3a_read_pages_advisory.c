// Thesis Figure 4-3 (a): Figure 4-1 (a) with the advisory function.  The
// figure's lines are kept as printed, with the scan's OCR slip fixed
// ("READ):" is "READ);"); its "..." is filled in with the setup a complete
// program needs.

int n = 1024;
int main(void) {
    xInit(".", NONDURABLE);
    {
int* x = xMmap("input.db",
               n*PAGESIZE);
int i, value;

xbegin();
for (i = 0; i < n; i++) {
  int j = i*PAGESIZE/sizeof(int);
  setPageAccess(&(x[j]),
                READ);
  value = x[j];
}
xend();

    (void)value;
    }
    xMunmap("input.db");
    xShutdown();
    return 0;
}
