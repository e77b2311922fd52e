# Advice rules (api_precision_advice.csv, api_performance_advice.csv) change nothing in the code;
# the configuration advice (TP320-TP322) appears once per run that imports torch.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_npu

emb = nn.Embedding(100, 16)                      # TP202
head = nn.Linear(16, 4)                          # TP305
a = torch.randn(2, 3, 4)
b = torch.baddbmm(a, a, a.transpose(1, 2))       # TP200
c = torch.reshape(a, (6, 4))                     # TP201
d = torch.matmul(c, c.t())                       # TP203
e = c.matmul(c.t())                              # TP204
params = list(head.parameters())
opts = [torch.optim.Adam(params), torch.optim.AdamW(params), torch.optim.SGD(params, lr=0.1),   # TP300-TP302
        torch.optim.RMSprop(params), torch.optim.Adadelta(params)]                           # TP303, TP304
with torch.autograd.detect_anomaly():            # TP306
    torch.autograd.set_detect_anomaly(False)     # TP307
torch.autograd.gradcheck(lambda x: x * 2, (torch.randn(2, dtype=torch.double, requires_grad=True),))  # TP308
loader = DataLoader(range(8), batch_size=2)      # TP309, TP310
fast = DataLoader(range(8), batch_size=2, pin_memory=True, num_workers=2)   # no advice
kwargs = {"pin_memory": True}
opaque = DataLoader(range(8), **kwargs)          # keywords unknown: no keyword advice
model = DDP(head)                                # TP311, TP312
x = c.to("cpu")                                  # TP313
y = c.to("cpu", non_blocking=True)               # no advice
