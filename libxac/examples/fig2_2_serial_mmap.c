// Thesis Figure 2-2 (left-hand side): the serial version using plain mmap,
// for comparison.  The figure's code, unchanged (it passes the
// uninitialized x as mmap's address hint, as the figure does).

int fileLength = 100000;
int main(void) {
    int i, j, sum = 0;
    int fd;
    int* x;
    fd = open("input.db",
        O_RDWR,
        0666);
    x = (int*)mmap(x,
        4096*fileLength,
        PROT_READ|PROT_WRITE,
        MAP_SHARED,
        fd,
        0);


    for (j = 0; j < 5; j++) {
        i = rand() % fileLength;
        sum += x[1024*i];
    }

    i = rand() % fileLength;
    x[1024*i] = sum;


    munmap(x, fileLength);
    close(fd);
    return 0;
}
