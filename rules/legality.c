/* Legality reasons (in progress). */
#include "legality.h"
