/* One MPI_Allreduce of BYTES (argv[1]) in floats, timed by SMPI's
 * simulated clock: simulate_test.go runs it under smpirun with SMPI's ring
 * AllReduce (--cfg=smpi/allreduce:lr) to check the ratio between two node
 * orders that the engine predicts. Rank 0 prints "seconds S". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char *argv[]) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? atol(argv[1]) : 1 << 20;
  int count = (int)(bytes / (long)sizeof(float));
  /* One buffer shared by every rank: the values do not matter, only the
   * messages, and 32 private copies would be memory for nothing. */
  float *in = SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  float *out = SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double end = MPI_Wtime();
  if (rank == 0) printf("seconds %.9f\n", end - start);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
