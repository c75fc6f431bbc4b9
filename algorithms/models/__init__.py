"""Model families: HiPPO, the continuous-time SSM, RNN, LSTM and the LMU."""
