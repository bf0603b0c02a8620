// See cuda_fp16.h beside this file.
#pragma once
#include "cuda_fp16.h"
