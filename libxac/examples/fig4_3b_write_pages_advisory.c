// Thesis Figure 4-3 (b): Figure 4-1 (b) with the advisory function.  The
// figure's lines are kept as printed, with the scan's OCR slip fixed
// ("int i:" is "int i;"); its "..." is filled in with the setup a complete
// program needs.

int n = 1024;
int main(void) {
    xInit(".", NONDURABLE);
    {
int* x = xMmap("input.db",
               n*PAGESIZE);
int i;

xbegin();
for (i = 0; i < n; i++) {
  int j = i*PAGESIZE/sizeof(int);
  setPageAccess(&(x[j]),
                READ_WRITE);
  x[j] = i;
}
xend();

    }
    xMunmap("input.db");
    xShutdown();
    return 0;
}
