/** What a worker reports about itself; read by the runner and the ack batcher alike. */
export interface WorkerStats {
  leased: number;
  completed: number;
  failed: number;
  /** Jobs whose lease was lost before they could be acknowledged. */
  lost: number;
}
