import { QueryTypes, Sequelize } from 'sequelize';
import { Circuit, User } from '../models';

export interface StarState {
  starred: boolean;
  starCount: number;
}

/**
 * Stars (or unstars) a circuit for a user. Idempotent: the star row and `star_count` change
 * together in one transaction, and only when the row was really inserted or deleted.
 */
export async function setCircuitStar(
  sequelize: Sequelize,
  user: User,
  circuit: Circuit,
  starred: boolean,
): Promise<StarState> {
  const starCount = await sequelize.transaction(async (transaction) => {
    const changed = starred
      ? await sequelize.query(
          'INSERT INTO circuit_stars (user_uid, circuit_uid, created_at) VALUES (:user, :circuit, now()) ON CONFLICT DO NOTHING RETURNING user_uid',
          { replacements: { user: user.uid, circuit: circuit.uid }, type: QueryTypes.SELECT, transaction },
        )
      : await sequelize.query(
          'DELETE FROM circuit_stars WHERE user_uid = :user AND circuit_uid = :circuit RETURNING user_uid',
          { replacements: { user: user.uid, circuit: circuit.uid }, type: QueryTypes.SELECT, transaction },
        );
    if (changed.length === 0) {
      const current = await Circuit.findByPk(circuit.uid, { attributes: ['star_count'], transaction });
      return current?.star_count ?? circuit.star_count;
    }
    const [rows] = await sequelize.query(
      'UPDATE circuits SET star_count = GREATEST(star_count + :delta, 0) WHERE uid = :circuit RETURNING star_count',
      { replacements: { delta: starred ? 1 : -1, circuit: circuit.uid }, transaction },
    );
    return Number((rows as { star_count: number }[])[0].star_count);
  });
  circuit.star_count = starCount;
  return { starred, starCount };
}
