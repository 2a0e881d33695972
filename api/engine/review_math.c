/* Lichess's review arithmetic (review_math.h), written from its published
 * description (lichess.org/page/accuracy) and lila's modules/analyse
 * (WinPercent, AccuracyPercent.scala, Advice.scala): the same constants,
 * our own code. Where we differ from lila it is said beside the line. */
#include "review_math.h"

#include <math.h>
#include <stddef.h>

/* lila's fit of win% to centipawns from Lichess games (lila pull 11148). */
static const double WIN_MULTIPLIER = -0.00368208;
/* lila's fit of a move's accuracy to the win% it lost. */
static const double ACCURACY_SCALE = 103.1668100711649, ACCURACY_DECAY = 0.04354415386753951,
                    ACCURACY_OFFSET = -3.166924740191411;
/* lila adds 1 to every move's accuracy for the engine's own uncertainty; we
 * keep it, so our figures are the ones Lichess shows for the same evals. */
static const double ACCURACY_BONUS = 1.0;

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static double clamp_double(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

int review_eval_cp(const review_eval_t *e)
{
    if (!e->is_mate)
        return clamp_int(e->value, -REVIEW_CP_CEILING, REVIEW_CP_CEILING);
    if (e->value == 0)
        return e->mated_white ? -REVIEW_CP_CEILING : REVIEW_CP_CEILING;
    return e->value > 0 ? REVIEW_CP_CEILING : -REVIEW_CP_CEILING;
}

double review_winning_chances(int cp)
{
    cp = clamp_int(cp, -REVIEW_CP_CEILING, REVIEW_CP_CEILING);
    return clamp_double(2.0 / (1.0 + exp(WIN_MULTIPLIER * cp)) - 1.0, -1.0, 1.0);
}

double review_win_percent(int cp) { return 50.0 + 50.0 * review_winning_chances(cp); }

double review_move_accuracy(double win_before, double win_after)
{
    if (win_after >= win_before)
        return 100.0;
    double raw = ACCURACY_SCALE * exp(-ACCURACY_DECAY * (win_before - win_after)) + ACCURACY_OFFSET;
    return clamp_double(raw + ACCURACY_BONUS, 0.0, 100.0);
}

/* Whether e is a mate for the side white (true: White) to deliver. */
static bool mate_for(const review_eval_t *e, bool white)
{
    if (!e->is_mate)
        return false;
    bool white_mates = e->value == 0 ? !e->mated_white : e->value > 0;
    return white_mates == white;
}

review_judgement_t review_judge(const review_eval_t *before, const review_eval_t *after, bool white_moved)
{
    int sign = white_moved ? 1 : -1;
    int cp_before = sign * review_eval_cp(before), cp_after = sign * review_eval_cp(after);
    bool had_mate = mate_for(before, white_moved), has_mate = mate_for(after, white_moved);
    bool was_mated = mate_for(before, !white_moved), is_mated = mate_for(after, !white_moved);
    /* A mate the mover had and let go (lila's MateLost): lila calls it an
     * inaccuracy when still above 999 cp; we call it at least a mistake. */
    if (had_mate && !has_mate) {
        if (after->is_mate && is_mated)
            return REVIEW_JUDGEMENT_BLUNDER;
        return cp_after > 700 ? REVIEW_JUDGEMENT_MISTAKE : REVIEW_JUDGEMENT_BLUNDER;
    }
    /* A mate the mover walked into (lila's MateCreated), by how lost it was. */
    if (is_mated && !was_mated) {
        if (cp_before < -999)
            return REVIEW_JUDGEMENT_INACCURACY;
        return cp_before < -700 ? REVIEW_JUDGEMENT_MISTAKE : REVIEW_JUDGEMENT_BLUNDER;
    }
    if (before->is_mate && after->is_mate)
        return REVIEW_JUDGEMENT_NONE; /* a mate kept, or delayed: no judgement, as lila */
    double delta = review_winning_chances(cp_before) - review_winning_chances(cp_after);
    if (delta >= 0.3)
        return REVIEW_JUDGEMENT_BLUNDER;
    if (delta >= 0.2)
        return REVIEW_JUDGEMENT_MISTAKE;
    return delta >= 0.1 ? REVIEW_JUDGEMENT_INACCURACY : REVIEW_JUDGEMENT_NONE;
}

const char *review_judgement_name(review_judgement_t j)
{
    static const char *const names[REVIEW_JUDGEMENT_COUNT] = { NULL, "inaccuracy", "mistake", "blunder" };
    return j > REVIEW_JUDGEMENT_NONE && j < REVIEW_JUDGEMENT_COUNT ? names[j] : NULL;
}

/* Population standard deviation of the win% of evals[from .. from + n). */
static double win_deviation(const review_eval_t *evals, int from, int n)
{
    double sum = 0, squares = 0;
    for (int i = from; i < from + n; i++) {
        double w = review_win_percent(review_eval_cp(&evals[i]));
        sum += w;
        squares += w * w;
    }
    double mean = sum / n, variance = squares / n - mean * mean;
    return sqrt(variance > 0 ? variance : 0);
}

/* The volatility weight of ply index i (0-based) among count, lila's way:
 * windows of window_size win% values (count / 10, within 2..8) sliding over
 * evals[0..count]; the first window_size - 2 plies share the first window;
 * each weight is the window's deviation within 0.5..12. */
static double ply_weight(const review_eval_t *evals, int count, int i)
{
    int window_size = clamp_int(count / 10, 2, 8);
    if (window_size > count + 1)
        window_size = count + 1;
    int start = i - (window_size - 2);
    if (start < 0)
        start = 0;
    return clamp_double(win_deviation(evals, start, window_size), 0.5, 12.0);
}

void review_sides(const review_eval_t *evals, int count, bool white_first, review_side_t out[2])
{
    double weighted[2] = { 0, 0 }, weights[2] = { 0, 0 }, inverse[2] = { 0, 0 }, loss[2] = { 0, 0 };
    int moves[2] = { 0, 0 };
    for (int i = 0; i < count; i++) {
        bool white = (i % 2 == 0) == white_first;
        int side = white ? 0 : 1, sign = white ? 1 : -1;
        int before = sign * review_eval_cp(&evals[i]), after = sign * review_eval_cp(&evals[i + 1]);
        double accuracy = review_move_accuracy(review_win_percent(before), review_win_percent(after));
        double weight = ply_weight(evals, count, i);
        weighted[side] += accuracy * weight;
        weights[side] += weight;
        /* An accuracy of 0 would make the harmonic mean 0: counted as 1, as lila's mean does. */
        inverse[side] += 1.0 / (accuracy > 1.0 ? accuracy : 1.0);
        loss[side] += before > after ? before - after : 0;
        moves[side]++;
    }
    for (int s = 0; s < 2; s++) {
        out[s] = (review_side_t){ .moves = moves[s] };
        if (!moves[s])
            continue;
        out[s].acpl = loss[s] / moves[s];
        out[s].accuracy = (weighted[s] / weights[s] + moves[s] / inverse[s]) / 2.0;
    }
}
