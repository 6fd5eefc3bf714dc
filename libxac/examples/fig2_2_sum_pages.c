// Thesis Figure 2-2 (right-hand side): the concurrent version, written with
// LIBXAC, of a program that sums the first integer of 5 random pages and
// stores the sum on a 6th random page.  The figure's code, unchanged.

int fileLength = 100000;
int main(void) {
    int i, j, sum = 0;
    int* x;

    xInit(".", NONDURABLE);


    x = (int*)xMmap("input.db",
        4096*fileLength);





    while (1) {
        xbegin();
        for (j = 0; j < 5; j++) {
            i = rand() % fileLength;
            sum += x[1024*i];
        }

        i = rand() % fileLength;
        x[1024*i] = sum;
        if (xend()==COMMITTED) break;
    }

    xMunmap("input.db");
    xShutdown();
    return 0;
}
