#!/usr/bin/env python
"""A script whose first import is a __future__ import: torch_npu goes after the whole import block."""
from __future__ import absolute_import, division, print_function

import os
import sys
# the framework
import torch
import torch.nn as nn

import numpy as np

print(torch.cuda.device_count(), nn.Linear, np.zeros(1), os.sep, sys.argv)
