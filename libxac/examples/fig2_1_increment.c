// Thesis Figure 2-1: LIBXAC program that increments the first integer of a
// memory-mapped file.  The figure's code, unchanged; it is compiled with
// "-include xac.h", as the figure has no #include lines.

int fileLength = 10;
int main(void) {
    int* x;

    xInit(".", NONDURABLE);
    x = (int*)xMmap("input.db", 4096*fileLength);

    while (1) {
        xbegin();
        x[0]++;
        if (xend() == COMMITTED) break;
    }

    xMunmap("input.db");
    xShutdown();
    return 0;
}
