import { Board, BoardCircuit } from '../models/boards';

/** Returns whether a membership was removed. */
export async function removeCircuitFromBoard(board: Board, circuitUid: string): Promise<boolean> {
  return (await BoardCircuit.destroy({ where: { board_uid: board.uid, circuit_uid: circuitUid } })) > 0;
}
