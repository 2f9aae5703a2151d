import { Sequelize } from 'sequelize';
import { Board } from './Board';
import { BoardCircuit } from './BoardCircuit';
import { BoardStar } from './BoardStar';

export { Board, BoardCircuit, BoardStar };

/** Binds the boards domain's models. */
export function initBoardModels(sequelize: Sequelize): void {
  for (const model of [Board, BoardCircuit, BoardStar]) model.initModel(sequelize);
}
