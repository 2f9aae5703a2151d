import type { Circuit } from '../models';
import { Board, BoardCircuit } from '../models/boards';

/** Idempotent: adding a circuit already in the board changes nothing. */
export async function addCircuitToBoard(board: Board, circuit: Circuit): Promise<void> {
  await BoardCircuit.bulkCreate([{ board_uid: board.uid, circuit_uid: circuit.uid }], { ignoreDuplicates: true });
}
