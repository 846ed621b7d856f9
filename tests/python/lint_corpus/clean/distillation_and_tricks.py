"""Patterns that look like bugs to a text matcher but are correct: a frozen teacher in eval
mode inside the loop, several losses summed before one backward, an LBFGS closure, and a
policy-gradient loop whose ``env.step`` is not an optimizer step."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 4))
teacher = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 4))
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])
head_opt = torch.optim.SGD(heads.parameters(), lr=0.01)
T = 2.0

for step in range(100):
    x = torch.randn(32, 16)
    y = torch.randint(0, 4, (32,))
    teacher.eval()
    with torch.no_grad():
        soft_targets = F.softmax(teacher(x) / T, dim=1)
    student.train()
    logits = student(x)
    kd = F.kl_div(F.log_softmax(logits / T, dim=1), soft_targets, reduction="batchmean") * T * T
    loss = kd + F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    head_opt.zero_grad()
    total = 0
    features = logits.detach()
    for head in heads:
        total += F.cross_entropy(head(features), y % 2)
    total.backward()
    head_opt.step()

# LBFGS re-evaluates the loss through a closure that zeroes and backpropagates itself.
w = torch.zeros(3, requires_grad=True)
lbfgs = torch.optim.LBFGS([w], lr=0.5)
target = torch.tensor([1.0, -2.0, 0.5])
for _ in range(5):
    def closure():
        lbfgs.zero_grad()
        err = ((w - target) ** 2).sum()
        err.backward()
        return err

    lbfgs.step(closure)


class ToyEnv:
    def reset(self):
        return torch.zeros(4)

    def step(self, action):
        return torch.randn(4), random.random(), random.random() < 0.1


policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
policy_opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
env = ToyEnv()
for episode in range(10):
    obs, done, log_probs, rewards = env.reset(), False, [], []
    while not done:
        dist = torch.distributions.Categorical(logits=policy(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done = env.step(action.item())
        rewards.append(reward)
    returns = torch.tensor([sum(rewards[i:]) for i in range(len(rewards))])
    policy_loss = -(torch.stack(log_probs) * (returns - returns.mean())).sum()
    policy_opt.zero_grad()
    policy_loss.backward()
    policy_opt.step()
